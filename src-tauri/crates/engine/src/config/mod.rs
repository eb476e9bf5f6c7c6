//! What the user configures, and the writes that keep it safe: connections, profiles and
//! their order, external profiles' config directories and sign-in (`accounts.rs`), the account an `exec`
//! launch runs on (`exec_account.rs`), credentials
//! in the keychain (rotation through the journal; staging and
//! orphan clean-up that never takes a live key), which secrets are present, portable
//! export/import, the relay's token and port, and each connection's routing settings
//! (affinity, quota-aware selection, first-byte timeout, the CLI backend). `inputs.rs` holds the inputs,
//! `rows.rs` turns rows into definitions; `dir_lock.rs` is the data dir's lock.

pub(crate) mod accounts;
pub(crate) mod affinity;
pub(crate) mod audit;
pub(crate) mod cli_backend;
pub(crate) mod connections;
pub(crate) mod credentials;
pub(crate) mod dir_lock;
pub(crate) mod exec_account;
pub(crate) mod exec_pool;
pub(crate) mod inputs;
pub(crate) mod limits;
pub(crate) mod orphans;
pub(crate) mod pools;
pub(crate) mod portable;
pub(crate) mod profiles;
pub(crate) mod quota_aware;
pub(crate) mod relay_settings;
pub(crate) mod relay_users;
pub(crate) mod reorder;
pub(crate) mod rows;
pub(crate) mod sign_in;
pub(crate) mod staging;
pub(crate) mod start_with_system;
pub(crate) mod upstream_timeout;
