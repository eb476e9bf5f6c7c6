//! The store the replicas share: a fresh database on SWITCHYARD_TEST_PG, the master key file
//! (0600), the CLI run on it from an admin data dir of its own, and psql for what the tests
//! count in it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{run_env, Run};

pub struct TeamStore {
    /// `postgres://…/sy_rep_NAME`.
    pub url: String,
    pub key_file: PathBuf,
    admin: PathBuf,
}

impl TeamStore {
    /// A fresh database `sy_rep_NAME` on the server at `server` and a master key in `dir`.
    pub fn create(server: &str, name: &str, dir: &Path) -> Result<Self, Box<dyn std::error::Error>> {
        let db = format!("sy_rep_{name}");
        for statement in [format!("DROP DATABASE IF EXISTS {db}"), format!("CREATE DATABASE {db}")] {
            let made = Command::new("psql").arg(server).args(["-q", "-c", &statement]).output()?;
            if !made.status.success() {
                return Err(format!("{statement}: {}", String::from_utf8_lossy(&made.stderr)).into());
            }
        }
        let (base, _) = server.rsplit_once('/').ok_or("the server URL has a path")?;
        let key_file = dir.join("master.key");
        std::fs::write(&key_file, crate::common::master_key_hex(0x5e))?;
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(TeamStore { url: format!("{base}/{db}"), key_file, admin: dir.join("admin") })
    }

    /// `switchyard --data-dir ADMIN ARGS…` on this store.
    pub fn cli(&self, args: &[&str], stdin: Option<&str>) -> Result<Run, Box<dyn std::error::Error>> {
        let key = self.key_file.display().to_string();
        let env = [("SWITCHYARD_STORE", self.url.as_str()), ("SWITCHYARD_MASTER_KEY_FILE", key.as_str())];
        run_env(&self.admin, args, stdin, &env)
    }

    /// [`TeamStore::cli`] that must exit 0.
    pub fn cli_ok(&self, args: &[&str], stdin: Option<&str>) -> Result<Run, Box<dyn std::error::Error>> {
        let out = self.cli(args, stdin)?;
        if out.code != 0 {
            return Err(format!("switchyard {args:?} exited {}: {}{}", out.code, out.stdout, out.stderr).into());
        }
        Ok(out)
    }

    /// `relay users add NAME`: the token, printed once.
    pub fn user_add(&self, name: &str) -> Result<String, Box<dyn std::error::Error>> {
        let out = self.cli_ok(&["--json", "relay", "users", "add", name], None)?;
        let token = serde_json::from_str::<Value>(&out.stdout)?["token"].as_str().unwrap_or_default().to_string();
        if !token.starts_with("syu_") {
            return Err(format!("no user token in {}", out.stdout).into());
        }
        Ok(token)
    }

    /// The single value psql prints for `query` on this store.
    pub fn sql(&self, query: &str) -> Result<String, Box<dyn std::error::Error>> {
        let out = Command::new("psql").arg(&self.url).args(["-qtA", "-c", query]).output()?;
        if !out.status.success() {
            return Err(format!("psql {query}: {}", String::from_utf8_lossy(&out.stderr)).into());
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }
}
