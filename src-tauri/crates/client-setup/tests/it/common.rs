//! Shared set-up: an engine on a temp data dir (the real keychain), two connections on the mock
//! provider (`cc` anthropic, `cx` openai), the clients' homes and files, a canary key.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use switchyard_client_setup::{Client, ClientHome, ClientRequest};
use switchyard_engine::{Engine, EngineError, NewConnection, Secret};
use switchyard_mock_provider::MockProvider;

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

pub async fn open(dir: &Path) -> Result<Engine, EngineError> {
    Engine::open(dir).await
}

pub fn secret(s: &str) -> Secret {
    Secret::new(s)
}

/// A client by its command-line name (a test names only real clients).
pub fn parsed(name: &str) -> Client {
    name.parse().unwrap_or_else(|e| panic!("client '{name}': {e}"))
}

pub fn home(root: &Path) -> ClientHome {
    ClientHome { home: root.to_path_buf(), ..ClientHome::default() }
}

pub fn req(root: &Path, name: &str, slug: &str) -> ClientRequest {
    ClientRequest { client: parsed(name), slug: Some(slug.into()), home: home(root), port: Some(4999), move_key: None }
}

pub fn write(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new("/")))?;
    std::fs::write(path, text)
}

/// An engine with `cc` (anthropic, model claude-a) and `cx` (openai, model gpt-a) on `mock`.
pub async fn engine_with(dir: &Path, mock: &MockProvider) -> Result<Engine, Box<dyn std::error::Error>> {
    let engine = open(dir).await?;
    let anthropic = NewConnection {
        slug: "cc".into(),
        protocol: "anthropic".into(),
        base_url: mock.base_url(),
        models: vec!["claude-a".into()],
        ..Default::default()
    };
    engine.connection_add(anthropic, Some(secret("sk-ant-primary-0001"))).await?;
    let openai = NewConnection {
        slug: "cx".into(),
        protocol: "openai".into(),
        base_url: format!("{}/v1", mock.base_url()),
        models: vec!["gpt-a".into()],
        ..Default::default()
    };
    engine.connection_add(openai, Some(secret("sk-oai-primary-0001"))).await?;
    Ok(engine)
}

/// The error of a call that must fail; a success fails the test with `why`.
pub fn must_fail<T: std::fmt::Debug>(r: Result<T, EngineError>, why: &str) -> Result<EngineError, String> {
    match r {
        Ok(v) => Err(format!("{why}: expected a refusal, got {v:?}")),
        Err(e) => Ok(e),
    }
}

/// Every file under the data dir's client backups.
pub fn backups(data: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let Ok(dirs) = std::fs::read_dir(data.join("client-backups")) else { return out };
    for d in dirs.flatten() {
        for f in std::fs::read_dir(d.path()).into_iter().flatten().flatten() {
            out.push(f.path());
        }
    }
    out
}

/// A data dir with [`engine_with`]'s connections on a started mock, and a temp HOME.
pub struct World {
    pub data: tempfile::TempDir,
    pub root: tempfile::TempDir,
    pub mock: MockProvider,
    pub engine: Engine,
}

impl World {
    pub async fn start() -> Result<Self, Box<dyn std::error::Error>> {
        let (data, root) = (tempfile::tempdir()?, tempfile::tempdir()?);
        let mock = MockProvider::start().await?;
        let engine = engine_with(data.path(), &mock).await?;
        Ok(World { data, root, mock, engine })
    }

    /// `client setup NAME SLUG` on this HOME (port 4999).
    pub fn req(&self, name: &str, slug: &str) -> ClientRequest {
        req(self.root.path(), name, slug)
    }

    pub fn home(&self) -> ClientHome {
        home(self.root.path())
    }

    /// No file under the data dir's client backups holds `key`.
    pub fn nowhere_kept(&self, key: &str) -> TestResult {
        for f in backups(self.data.path()) {
            assert!(!std::fs::read_to_string(&f)?.contains(key), "the kept {} holds the key", f.display());
        }
        Ok(())
    }

    /// `restore NAME` brings `path` back to exactly `original`.
    pub async fn restores(&self, name: &str, path: &Path, original: &str) -> TestResult {
        switchyard_client_setup::restore(&self.engine, parsed(name), &self.home(), false).await?;
        assert_eq!(std::fs::read_to_string(path)?, original, "{name}: restored byte for byte, the key put back");
        Ok(())
    }

    pub async fn stop(self) -> TestResult {
        self.engine.close().await;
        self.mock.shutdown().await?;
        Ok(())
    }
}
