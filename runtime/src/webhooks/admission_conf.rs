//! The `--admission-conf` file, reloaded when its content changes (Volcano's
//! `WatchAdmissionConf`): a conf that no longer reads or parses is reported and the last good one
//! stays in force.

use crate::admission::resource_groups::AdmissionConf;
use std::path::PathBuf;
use std::sync::RwLock;

/// The conf file and the text last seen in it.
pub struct ConfFile {
    path: PathBuf,
    seen: Option<String>,
}

impl ConfFile {
    /// Watches `path`, whose current text was read at start.
    pub fn new(path: PathBuf) -> ConfFile {
        let seen = std::fs::read_to_string(&path).ok();
        ConfFile { path, seen }
    }

    /// Reads the file; when its text changed, parses it into `into`. Returns `Ok(true)` when a new
    /// conf is in force, `Ok(false)` when nothing changed, `Err` (naming the file; the last good conf
    /// kept) when it cannot be read or parsed. A bad text is not reported again until it changes.
    pub fn reload(&mut self, into: &RwLock<AdmissionConf>) -> Result<bool, String> {
        let text = std::fs::read_to_string(&self.path).map_err(|e| format!("--admission-conf {}: {e}", self.path.display()))?;
        if self.seen.as_deref() == Some(text.as_str()) {
            return Ok(false);
        }
        self.seen = Some(text.clone());
        let conf = AdmissionConf::parse(&text).map_err(|e| format!("--admission-conf {}: {e}", self.path.display()))?;
        *into.write().unwrap_or_else(|e| e.into_inner()) = conf;
        Ok(true)
    }

    /// [`ConfFile::reload`], logged.
    pub fn reload_into(&mut self, into: &RwLock<AdmissionConf>) {
        match self.reload(into) {
            Ok(true) => tracing::info!("admission conf {} reloaded", self.path.display()),
            Ok(false) => {}
            Err(e) => tracing::error!("admission conf not reloaded, the last good one is still in force: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_conf_is_loaded_and_a_bad_one_keeps_the_last_good() {
        let path = std::env::temp_dir().join(format!("basalt-admission-conf-reload-{}", std::process::id()));
        std::fs::write(&path, "resourceGroups:\n- resourceGroup: a\n").unwrap();
        let conf = RwLock::new(AdmissionConf::parse(&std::fs::read_to_string(&path).unwrap()).unwrap());
        let mut f = ConfFile::new(path.clone());
        assert_eq!(f.reload(&conf), Ok(false), "unchanged");
        std::fs::write(&path, "resourceGroups:\n- resourceGroup: b\n").unwrap();
        assert_eq!(f.reload(&conf), Ok(true));
        assert_eq!(conf.read().unwrap().groups[0].name, "b");
        std::fs::write(&path, "resourceGroups: [").unwrap();
        assert!(f.reload(&conf).unwrap_err().starts_with(&format!("--admission-conf {}: ", path.display())));
        assert_eq!(conf.read().unwrap().groups[0].name, "b", "the last good conf stays");
        assert_eq!(f.reload(&conf), Ok(false), "a bad text is reported once");
        std::fs::remove_file(&path).unwrap();
        assert!(f.reload(&conf).is_err(), "a missing file is reported");
    }
}
