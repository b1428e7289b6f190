//! The CA bundle in the webhook configurations (Volcano's `addCaCertForWebhook`): for each
//! enabled path, the `MutatingWebhookConfiguration` or `ValidatingWebhookConfiguration` named
//! `volcano-admission-service-<resource>-<operation>` is waited for (polled every second up to
//! a bound), and every webhook in it gets `clientConfig.caBundle` = the CA; the object is
//! replaced only when a bundle differs.

use super::paths::{configuration_name, kind_of, Kind};
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::ByteString;
use kube::api::{Api, PostParams};
use std::time::{Duration, Instant};

async fn wait_get<K>(api: &Api<K>, name: &str, wait: Duration) -> Result<K, String>
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned,
{
    let start = Instant::now();
    loop {
        match api.get_opt(name).await {
            Ok(Some(o)) => return Ok(o),
            Ok(None) if start.elapsed() < wait => {
                tracing::warn!("webhook configuration {name} does not exist yet; waiting for it");
            }
            Ok(None) => return Err(format!("webhook configuration {name} did not appear within {wait:?}")),
            Err(e) if start.elapsed() < wait => tracing::warn!("cannot read webhook configuration {name}: {e}; retrying"),
            Err(e) => return Err(format!("cannot read webhook configuration {name}: {e}")),
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Sets every client config's `caBundle` to `bundle`; returns whether one differed.
fn set_bundles<'a>(configs: impl Iterator<Item = &'a mut WebhookClientConfig>, bundle: &Option<ByteString>) -> bool {
    let mut changed = false;
    for c in configs {
        if c.ca_bundle != *bundle {
            c.ca_bundle = bundle.clone();
            changed = true;
        }
    }
    changed
}

/// Waits for configuration `name`, sets its bundles through `bundles`, and replaces it when
/// one changed; `what` names the kind in errors as Volcano does (`mutating`, `validating`).
async fn update<K>(
    api: Api<K>,
    name: &str,
    wait: Duration,
    what: &str,
    bundles: impl FnOnce(&mut K) -> bool,
) -> Result<bool, String>
where
    K: kube::Resource + Clone + std::fmt::Debug + serde::de::DeserializeOwned + serde::Serialize,
{
    let mut c = wait_get(&api, name, wait).await?;
    let changed = bundles(&mut c);
    if changed {
        api.replace(name, &PostParams::default(), &c)
            .await
            .map_err(|e| format!("failed to update {what} admission webhooks {name}: {e}"))?;
    }
    Ok(changed)
}

/// Writes `ca` into the configuration of `path`; returns whether it changed anything.
///
/// Errors: the configuration did not appear within `wait`, or it cannot be replaced, naming it.
pub async fn add(client: &kube::Client, path: &str, ca: &[u8], wait: Duration) -> Result<bool, String> {
    let name = configuration_name(path);
    let bundle = Some(ByteString(ca.to_vec()));
    match kind_of(path) {
        Some(Kind::Mutating) => {
            let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
            update(api, &name, wait, "mutating", |c| {
                set_bundles(c.webhooks.iter_mut().flatten().map(|w| &mut w.client_config), &bundle)
            })
            .await
        }
        Some(Kind::Validating) => {
            let api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
            update(api, &name, wait, "validating", |c| {
                set_bundles(c.webhooks.iter_mut().flatten().map(|w| &mut w.client_config), &bundle)
            })
            .await
        }
        None => Err(format!("{path} is not an admission path")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_differing_bundle_counts_as_a_change() {
        let ca = Some(ByteString(b"ca".to_vec()));
        let mut cs = [WebhookClientConfig::default(), WebhookClientConfig { ca_bundle: ca.clone(), ..Default::default() }];
        assert!(set_bundles(cs.iter_mut(), &ca));
        assert!(cs.iter().all(|c| c.ca_bundle == ca));
        assert!(!set_bundles(cs.iter_mut(), &ca), "already in place");
    }
}
