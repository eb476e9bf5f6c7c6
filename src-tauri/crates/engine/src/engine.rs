//! The [`Engine`] facade, on the top floor: it opens a data dir ([`Engine::open`], the one
//! constructor, as [`OpenOptions`] say) into the rooms' shared [`Context`] and holds it with the
//! state only the owned-login room keeps; every use case of every room is reached through it
//! (it dereferences to the context the rooms implement them on).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use switchyard_core::routing::{CircuitBoard, CooldownPolicy};
use switchyard_store::{profiles, settings, Location, Store};
use switchyard_vault::{Keychain, MasterKey, Vault, VaultError};

use crate::clock::{Clock, SystemClock};
use crate::context::{stored_circuits, Context};
use crate::error::EngineError;
use crate::sealed::{recorded_kind_at, vault_for, VaultKind, VaultSpec, VAULT_ENV};

/// The engine: the rooms' context and the owned logins' refresh state. Cheap to share behind an
/// `Arc`; every use case is a method of the [`Context`] it dereferences to, or (owned logins) of
/// the engine itself.
#[derive(Debug)]
pub struct Engine {
    ctx: Context,
    /// Owned logins' refresh state in this process (`login/refresh.rs`).
    pub(crate) logins: crate::login::Logins,
}

impl std::ops::Deref for Engine {
    type Target = Context;

    fn deref(&self) -> &Context {
        &self.ctx
    }
}

/// Where the secrets of an opened data dir are kept.
enum VaultChoice {
    /// This vault (the OS keychain by default; a memory vault in tests).
    Given(Arc<dyn Vault>),
    /// Sealed in the store under this master key.
    Sealed(MasterKey),
    /// The vault a front end was asked for (`--vault`, `SWITCHYARD_VAULT`), else the one the data
    /// dir recorded, else the keychain; a sealed one asks `key` for its master key. On a team
    /// store secrets are always sealed.
    Chosen { choice: Option<VaultKind>, key: KeySource },
}

type KeySource = Box<dyn FnOnce() -> Result<MasterKey, VaultError> + Send>;

/// How [`Engine::open`] opens a data dir: where its store is (its SQLite file unless a team store
/// is named), where its secrets are kept, and the clock. `Engine::open(dir)` opens `dir` on its
/// own store with the OS keychain and the system clock.
pub struct OpenOptions {
    data_dir: PathBuf,
    /// A store named by the front end (`--store`, `SWITCHYARD_STORE`); `None`: the data dir's.
    store: Option<Location>,
    vault: VaultChoice,
    clock: Arc<dyn Clock>,
}

impl OpenOptions {
    /// `data_dir` on its own store, with the OS keychain and the system clock.
    pub fn at(data_dir: impl Into<PathBuf>) -> Self {
        OpenOptions {
            data_dir: data_dir.into(),
            store: None,
            vault: VaultChoice::Given(Arc::new(Keychain::new())),
            clock: Arc::new(SystemClock),
        }
    }

    /// The store at `store` (a team's Postgres, or an SQLite file elsewhere), when given.
    pub fn store(mut self, store: Option<Location>) -> Self {
        self.store = store;
        self
    }

    /// Secrets in `vault`.
    pub fn vault(mut self, vault: Arc<dyn Vault>) -> Self {
        self.vault = VaultChoice::Given(vault);
        self
    }

    /// Secrets sealed in the store under `key`.
    pub fn sealed(mut self, key: MasterKey) -> Self {
        self.vault = VaultChoice::Sealed(key);
        self
    }

    /// Secrets where `choice` says, else where the data dir recorded, else the keychain; `key` is
    /// asked for only when they are sealed (without one, or with the wrong one, nothing opens).
    /// A Postgres store is a server's: its secrets are always sealed, so the keychain is refused
    /// there and the key is required.
    pub fn choosing(
        mut self,
        choice: Option<VaultKind>,
        key: impl FnOnce() -> Result<MasterKey, VaultError> + Send + 'static,
    ) -> Self {
        self.vault = VaultChoice::Chosen { choice, key: Box::new(key) };
        self
    }

    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
}

impl<P: AsRef<Path> + ?Sized> From<&P> for OpenOptions {
    fn from(data_dir: &P) -> Self {
        OpenOptions::at(data_dir.as_ref())
    }
}

impl Engine {
    /// Opens a data dir as `options` say (creating it, owner-only): its store (migrated), its
    /// vault (a sealed one checked against the stored rows' key), the circuits it stored; then
    /// removes orphan keychain entries and lock files an interrupted operation left, and the CLI
    /// backend's runs a killed relay left.
    pub async fn open(options: impl Into<OpenOptions>) -> Result<Self, EngineError> {
        let OpenOptions { data_dir, store, vault, clock } = options.into();
        create_private_dir(&data_dir)?;
        let named = store.is_some();
        let location = match store {
            Some(location) => location,
            None => crate::store_location::store_location(&data_dir).await?,
        };
        let spec = match vault {
            VaultChoice::Given(vault) => VaultSpec::Given(vault),
            VaultChoice::Sealed(key) => VaultSpec::Sealed(key),
            VaultChoice::Chosen { choice, key } if named && location.is_postgres() => {
                if choice == Some(VaultKind::Keychain) {
                    return Err(EngineError::SealedVault(format!(
                        "sealed vault: a Postgres store ({}) keeps its secrets sealed in the store, never in this \
                         machine's keychain; start with {VAULT_ENV}=sealed (or no --vault) and \
                         SWITCHYARD_MASTER_KEY_FILE",
                        location.shown()
                    )));
                }
                VaultSpec::Sealed(key()?)
            }
            VaultChoice::Chosen { choice, key } => {
                let kind = match choice {
                    Some(kind) => kind,
                    None => recorded_kind_at(&location).await?,
                };
                match kind {
                    VaultKind::Keychain => VaultSpec::Given(Arc::new(Keychain::new())),
                    VaultKind::Sealed => VaultSpec::Sealed(key()?),
                }
            }
        };
        Self::open_in(data_dir, &location, spec, clock).await
    }

    /// `Engine::open(OpenOptions::at(data_dir).vault(vault).clock(clock))`: the tests' shorthand.
    pub async fn open_with(data_dir: &Path, vault: Arc<dyn Vault>, clock: Arc<dyn Clock>) -> Result<Self, EngineError> {
        Self::open(OpenOptions::at(data_dir).vault(vault).clock(clock)).await
    }

    async fn open_in(
        data_dir: PathBuf,
        location: &Location,
        spec: VaultSpec,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, EngineError> {
        let store = Store::open_at(location).await?;
        let (vault, sealer) = vault_for(&store, spec, &clock).await?;
        let mut conn = store.acquire().await?;
        let fresh_id = uuid::Uuid::new_v4().simple().to_string();
        let install_id = settings::get_or_insert(&mut conn, settings::INSTALL_ID, &fresh_id, clock.now_ms()).await?;
        let board = Arc::new(CircuitBoard::restore(CooldownPolicy::default(), stored_circuits(&mut conn).await?));
        drop(conn);
        // Test/discovery never follows a redirect with a key attached (docs/design.md, invariant 19).
        let http = switchyard_providers::discovery::http_client()
            .map_err(|e| EngineError::Internal(format!("cannot build HTTP client: {e}")))?;
        let ctx = Context {
            store,
            vault,
            clock,
            install_id,
            faults: Default::default(),
            board,
            http,
            presence: Default::default(),
            readiness_loads: Default::default(),
            sealer,
            team_store: location.is_postgres(),
            data_dir,
            actor: std::sync::RwLock::new("local".to_string()),
        };
        let engine = Engine { ctx, logins: Default::default() };
        match engine.collect_orphans().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(removed = n, "removed orphan keychain entries"),
            Err(EngineError::KeychainUnavailable(why)) => {
                tracing::warn!(%why, "orphan clean-up skipped")
            }
            Err(e) => return Err(e),
        }
        let ids = {
            let mut conn = engine.store.acquire().await?;
            profiles::all_ids(&mut conn).await?
        };
        let swept = engine.sweep_login_locks(&ids);
        if swept > 0 {
            tracing::info!(removed = swept, "removed lock files of removed logins");
        }
        let runs = engine.sweep_cli_runs();
        if runs > 0 {
            tracing::info!(removed = runs, "removed CLI backend runs a stopped relay left");
        }
        Ok(engine)
    }
}

fn create_private_dir(dir: &Path) -> Result<(), EngineError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| EngineError::Internal(format!("cannot create data dir {}: {e}", dir.display())))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    Ok(())
}

/// The data dir both front ends use: `SWITCHYARD_DATA_DIR`, else the per-user data dir.
pub fn default_data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SWITCHYARD_DATA_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    let base = dirs::data_dir().unwrap_or_else(|| PathBuf::from("."));
    base.join("switchyard")
}
