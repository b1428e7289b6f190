//! The Queue commands (Volcano's `pkg/cli/queue`, and `vqueues`): each takes plain options and
//! an API client and returns what Volcano prints on success (nothing for create, delete and
//! operate).

use super::api_error;
use super::queue_table::{counts_by_queue, queues_table, vqueues_table};
use crate::crd::{Command, PodGroup, Queue, QueueSpec, QueueStatus};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::Client;

/// The namespace Volcano's `vcctl queue operate` creates its Commands in.
pub const COMMAND_NAMESPACE: &str = "default";

/// What `vcctl queue operate --action` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// `open`: Command `OpenQueue`.
    Open,
    /// `close`: Command `CloseQueue`.
    Close,
    /// `update`: merge patch `{"spec":{"weight":N}}`.
    Update(i32),
}

impl Operation {
    /// The operation of `--action` and `--weight`, checked as Volcano checks them.
    ///
    /// Errors (Volcano's words): no action (`action can not be null`), an unknown one (`action
    /// <a> invalid, valid actions are open, close and update`), `update` without a weight above
    /// 0 (naming the queue).
    pub fn parse(action: &str, weight: i32, queue: &str) -> Result<Operation, String> {
        match action {
            "open" => Ok(Operation::Open),
            "close" => Ok(Operation::Close),
            "update" if weight <= 0 => {
                Err(format!("when update queue {queue}, weight must be specified, the value must be greater than 0"))
            }
            "update" => Ok(Operation::Update(weight)),
            "" => Err("action can not be null".into()),
            other => Err(format!("action {other} invalid, valid actions are open, close and update")),
        }
    }
}

/// The Queue `vcctl queue create` submits: `spec.weight`, and `status.state` (which the API
/// server drops on create; the queue controller sets the state).
pub fn new_queue(name: &str, weight: i32, state: &str) -> Queue {
    let mut q = Queue::new(name, QueueSpec { weight: Some(weight), ..Default::default() });
    q.status = Some(QueueStatus { state: Some(state.to_string()), ..Default::default() });
    q
}

/// `vcctl queue create`: creates [`new_queue`]. Prints nothing.
///
/// Errors: the API server's (the queue exists, a webhook refused it).
pub async fn create(client: &Client, name: &str, weight: i32, state: &str) -> Result<String, String> {
    Api::<Queue>::all(client.clone()).create(&PostParams::default(), &new_queue(name, weight, state)).await.map_err(api_error)?;
    Ok(String::new())
}

/// `vcctl queue delete`: deletes Queue `name`. Prints nothing.
///
/// Errors: an empty name (`queue name must be specified`), the API server's
/// (`queues.scheduling.volcano.sh "<name>" not found`).
pub async fn delete(client: &Client, name: &str) -> Result<String, String> {
    if name.is_empty() {
        return Err("queue name must be specified".into());
    }
    Api::<Queue>::all(client.clone()).delete(name, &DeleteParams::default()).await.map_err(api_error)?;
    Ok(String::new())
}

/// `vcctl queue operate`: `open`/`close` read Queue `name` and create Command
/// `OpenQueue`/`CloseQueue` targeting it in namespace `default` (owned by the Queue, named
/// `<queue>-<action>-…`), which the queue controller acts on; `update` merge-patches its weight.
/// Prints nothing.
///
/// Errors: an empty name (`queue name must be specified`), the API server's
/// (`queues.scheduling.volcano.sh "<name>" not found`).
pub async fn operate(client: &Client, name: &str, op: Operation) -> Result<String, String> {
    if name.is_empty() {
        return Err("queue name must be specified".into());
    }
    let queues = Api::<Queue>::all(client.clone());
    let action = match op {
        Operation::Open => "OpenQueue",
        Operation::Close => "CloseQueue",
        Operation::Update(w) => {
            let patch = serde_json::json!({"spec": {"weight": w}});
            queues.patch(name, &PatchParams::default(), &Patch::Merge(&patch)).await.map_err(api_error)?;
            return Ok(String::new());
        }
    };
    let queue = queues.get(name).await.map_err(api_error)?;
    let cmd = Command::for_object(COMMAND_NAMESPACE, &queue, action);
    Api::<Command>::namespaced(client.clone(), COMMAND_NAMESPACE)
        .create(&PostParams::default(), &cmd)
        .await
        .map_err(api_error)?;
    Ok(String::new())
}

async fn pod_groups(client: &Client, what: &str) -> Result<Vec<PodGroup>, String> {
    Api::<PodGroup>::all(client.clone())
        .list(&ListParams::default())
        .await
        .map(|l| l.items)
        .map_err(|e| format!("failed to list podgroup{what} with err: {}", api_error(e)))
}

/// `vcctl queue list`: every Queue with its PodGroups per phase ([`queues_table`]), or `No
/// resources found`.
///
/// Errors: the API server's.
pub async fn list(client: &Client) -> Result<String, String> {
    let queues = Api::<Queue>::all(client.clone()).list(&ListParams::default()).await.map_err(api_error)?.items;
    if queues.is_empty() {
        return Ok("No resources found\n".into());
    }
    let pgs = pod_groups(client, "s").await?;
    Ok(queues_table(&queues, &counts_by_queue(&queues, &pgs)))
}

/// `vcctl queue get`: Queue `name` with its PodGroups per phase ([`queues_table`]).
///
/// Errors: an empty name (`name is mandatory to get the particular queue details`), the API
/// server's (`queues.scheduling.volcano.sh "<name>" not found`).
pub async fn get(client: &Client, name: &str) -> Result<String, String> {
    if name.is_empty() {
        return Err("name is mandatory to get the particular queue details".into());
    }
    let queue = Api::<Queue>::all(client.clone()).get(name).await.map_err(api_error)?;
    let pgs = pod_groups(client, &format!(" for queue {name}")).await?;
    let queues = [queue];
    Ok(queues_table(&queues, &counts_by_queue(&queues, &pgs)))
}

/// `vqueues`: Queue `name` ([`vqueues_table`]), or every Queue when `name` is empty (`No
/// resources found` when there is none).
///
/// Errors: the API server's (`queues.scheduling.volcano.sh "<name>" not found`).
pub async fn vqueues(client: &Client, name: &str) -> Result<String, String> {
    let api = Api::<Queue>::all(client.clone());
    if !name.is_empty() {
        return Ok(vqueues_table(&[api.get(name).await.map_err(api_error)?]));
    }
    let queues = api.list(&ListParams::default()).await.map_err(api_error)?.items;
    if queues.is_empty() {
        return Ok("No resources found\n".into());
    }
    Ok(vqueues_table(&queues))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operate_actions_are_checked_in_volcanos_words() {
        assert_eq!(Operation::parse("open", 0, "q"), Ok(Operation::Open));
        assert_eq!(Operation::parse("close", 0, "q"), Ok(Operation::Close));
        assert_eq!(Operation::parse("update", 4, "q"), Ok(Operation::Update(4)));
        assert_eq!(
            Operation::parse("update", 0, "q"),
            Err("when update queue q, weight must be specified, the value must be greater than 0".into())
        );
        assert_eq!(Operation::parse("", 0, "q"), Err("action can not be null".into()));
        assert_eq!(
            Operation::parse("drain", 0, "q"),
            Err("action drain invalid, valid actions are open, close and update".into())
        );
    }

    #[test]
    fn create_submits_weight_and_state() {
        let json = serde_json::to_value(new_queue("team", 3, "Open")).unwrap();
        assert_eq!(json["apiVersion"], "scheduling.volcano.sh/v1beta1");
        assert_eq!(json["metadata"]["name"], "team");
        assert_eq!(json["spec"]["weight"], 3);
        assert_eq!(json["status"]["state"], "Open");
    }
}
