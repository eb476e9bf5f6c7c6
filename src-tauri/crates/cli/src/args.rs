//! Command-line grammar (docs/interface.md). Parsing only; no domain checks here. A parse
//! error that would repeat a value that may be a pasted key is turned into one naming the
//! argument instead.

use std::path::PathBuf;

use clap::error::{ContextKind, ContextValue};
use clap::{Args, Parser, Subcommand};
use switchyard_engine::{echo_safe, AffinityMode, InvalidInput, Strategy, NOT_SHOWN};

#[derive(Debug, Parser)]
#[command(
    name = "switchyard",
    version,
    about = "Many credential profiles for one LLM connection, routed through a local relay"
)]
pub struct Cli {
    /// Data dir (SQLite file and install id). Default: the per-user app data dir.
    #[arg(long, global = true, env = "SWITCHYARD_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Machine-readable JSON on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// Where secrets are kept: `keychain` (the OS keychain) or `sealed` (encrypted in the store
    /// under the master key from SWITCHYARD_MASTER_KEY_FILE). Default: what the data dir uses.
    #[arg(long, global = true, env = "SWITCHYARD_VAULT", value_name = "KIND", value_parser = ["keychain", "sealed"])]
    pub vault: Option<String>,
    /// Where the store is: `postgres://user@host:port/db` (a team's server: secrets sealed, the
    /// master key required) or an SQLite file. Default: the data dir's SQLite file. `--help`
    /// never shows the variable's value (a Postgres URL may carry its password).
    #[arg(long, global = true, env = "SWITCHYARD_STORE", value_name = "URL", hide_env_values = true)]
    pub store: Option<String>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Endpoint configurations.
    #[command(subcommand)]
    Connection(ConnectionCmd),
    /// Credential profiles of a connection.
    #[command(subcommand)]
    Profile(ProfileCmd),
    /// Write connections to a shareable file (never secrets); stdout without --out.
    Export(crate::portable_cmd::ExportArgs),
    /// Read a shared file: profiles arrive disabled and without credentials.
    Import(crate::portable_cmd::ImportArgs),
    /// Test/discovery: prove which models each key can serve.
    Verify {
        slug: String,
        /// Only this profile (id or label).
        profile: Option<String>,
        /// Also send one 1-token request per enabled model.
        #[arg(long)]
        deep: bool,
    },
    /// Routing mode, gates and readiness.
    #[command(subcommand)]
    Routing(RoutingCmd),
    /// Circuit breakers of profiles.
    #[command(subcommand)]
    Health(HealthCmd),
    /// The attempt ledger of a connection, newest first (or every row as JSON lines).
    Attempts(crate::attempts_cmd::AttemptsArgs),
    /// Requests, tokens, errors and cost from the ledger, by profile, model, day or tag.
    Usage(crate::usage_cmd::UsageArgs),
    /// The price table (USD per million tokens per model) and subscription key fees.
    Prices(crate::prices_cmd::PricesArgs),
    /// The latest limit readings of a connection's profiles, per window, with their age.
    Quota { slug: String },
    /// Every connection and pool in one screen: mode, keys ok/cooling/expired, the binding
    /// window, today's spend against the daily cap. Reads the store, never the network.
    Status {
        /// One short line, for a shell prompt or Claude Code's statusLine.
        #[arg(long)]
        line: bool,
    },
    /// Caps on relay users, connections and pools: requests, tokens, USD per window, or in flight.
    #[command(subcommand)]
    Limits(crate::limits_cmd::LimitsCmd),
    /// Admin changes (users, scopes, limits): who, what, when.
    #[command(subcommand)]
    Audit(crate::limits_cmd::AuditCmd),
    /// The local relay.
    #[command(subcommand)]
    Relay(RelayCmd),
    /// The sealed vault (secrets encrypted in the store under a master key).
    #[command(subcommand)]
    Vault(VaultCmd),
    /// The store itself: copy this data dir onto a team store.
    #[command(subcommand)]
    Store(StoreCmd),
    /// Pools across connections: one routable name for several (connection, model) members.
    #[command(subcommand)]
    Pool(crate::pool_cmd::PoolCmd),
    /// Run a client with its environment pointed at the relay for SLUG (an embedded relay serves
    /// for the command's lifetime when none listens): `switchyard exec SLUG -- CMD [ARGS...]`.
    Exec(crate::exec_cmd::ExecArgs),
    /// Point a coding agent's own config file at the relay, show it, undo it.
    #[command(subcommand)]
    Client(crate::client_cmd::ClientCmd),
    /// Show or change settings: `settings`, `settings evidence-max-age-days N`, `settings relay-port N`,
    /// `settings time-zone NAME|system`, `settings ledger-retention-rows N`.
    Settings {
        #[arg(value_parser = clap::builder::PossibleValuesParser::new(switchyard_engine::UserSetting::ALL.map(|s| s.name())))]
        key: Option<String>,
        value: Option<String>,
    },
}

#[derive(Debug, Subcommand)]
pub enum RelayCmd {
    /// Serve the relay until interrupted (SIGINT/SIGTERM: drains, flushes the ledger, exits 0).
    Serve {
        /// Address (default: 127.0.0.1 and the port from settings, 4141). Beyond loopback only
        /// with --tls-cert and --tls-key.
        #[arg(long, value_name = "ADDR:PORT")]
        listen: Option<std::net::SocketAddr>,
        /// PEM certificate chain: serve HTTPS (SIGHUP reads it and the key again).
        #[arg(long, value_name = "FILE", requires = "tls_key")]
        tls_cert: Option<PathBuf>,
        /// PEM private key of --tls-cert.
        #[arg(long, value_name = "FILE", requires = "tls_cert")]
        tls_key: Option<PathBuf>,
        /// On a shared store (`--store postgres://…`): how long a half-open probe's lease lasts
        /// before another replica may probe (a replica that died holding it).
        #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
        probe_lease_secs: u64,
        /// How long a concurrency slot lasts unless its relay renews it (a killed relay's slots
        /// are free again after it).
        #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
        limit_lease_secs: u64,
        /// Also serve GET /metrics without a token at this address (loopback, or any with TLS).
        /// On the relay's own port /metrics needs an admin token or the install token from loopback.
        #[arg(long, value_name = "ADDR:PORT")]
        metrics_listen: Option<std::net::SocketAddr>,
        /// Export OpenTelemetry traces (OTLP/HTTP) to this collector's base URL (spans go to
        /// URL/v1/traces; OTEL_EXPORTER_OTLP_PROTOCOL=http/json for JSON). No traces without it.
        #[arg(long, value_name = "URL", env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
        otlp_endpoint: Option<String>,
        /// Count nothing for /metrics (its gauges — circuits, quota, limits — are still served).
        #[arg(long)]
        no_metrics: bool,
        /// Serve the web console at /console/ for admin users (beyond loopback only with TLS).
        #[arg(long)]
        console: bool,
    },
    /// Per-person relay tokens (stored hashed; the ledger records the user).
    #[command(subcommand)]
    Users(UsersCmd),
    /// Print the relay token (created on first use).
    Token {
        /// Replace it with a new random token.
        #[arg(long)]
        rotate: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum UsersCmd {
    /// Add a user and print their token once (only its hash is kept).
    Add {
        name: String,
        #[command(flatten)]
        grant: GrantArgs,
    },
    /// Change a user's role, scope or expiry.
    Edit {
        name: String,
        #[command(flatten)]
        grant: GrantArgs,
        /// Remove the expiry.
        #[arg(long, conflicts_with = "expires")]
        no_expiry: bool,
        /// Refuse the edit if the user changed since this revision.
        #[arg(long, value_name = "N")]
        if_revision: Option<i64>,
    },
    /// A new token, printed once; the old one is refused at once on every relay.
    Rotate { name: String },
    /// Every user, revoked ones too: role, scope, expiry, last used (never a token).
    List,
    /// Refuse the user's token from now on (every relay within a second).
    Revoke { name: String },
}

/// A user's role, scope and expiry (`relay users add|edit`).
#[derive(Debug, clap::Args)]
pub struct GrantArgs {
    #[arg(long, value_parser = ["user", "admin"])]
    pub role: Option<String>,
    /// Connections and pools the user may reach, comma-separated (empty: all).
    #[arg(long, value_name = "SLUG,...", value_delimiter = ',', num_args = 0..)]
    pub connections: Option<Vec<String>>,
    /// Model patterns the user may ask for (`claude-*`), comma-separated (empty: all).
    #[arg(long, value_name = "PATTERN,...", value_delimiter = ',', num_args = 0..)]
    pub models: Option<Vec<String>>,
    /// When the token stops working (RFC 3339).
    #[arg(long, value_name = "RFC3339")]
    pub expires: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum StoreCmd {
    /// Copy configuration, ledger, relay users and keys into an empty Postgres store, keys sealed
    /// under its master key (owned and official-CLI logins are signed in again there). This
    /// store is only read.
    Copy {
        /// The team store: postgres://USER@HOST:PORT/DB (or SWITCHYARD_COPY_TO, which keeps a
        /// password out of the shell history and the process list).
        #[arg(long, value_name = "URL", env = "SWITCHYARD_COPY_TO", hide_env_values = true)]
        to: String,
        /// The team store's master key (32 random bytes, raw or 64 hex digits, mode 0600): every
        /// replica starts with SWITCHYARD_MASTER_KEY_FILE pointing at this file.
        #[arg(long, value_name = "FILE")]
        master_key_file: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum VaultCmd {
    /// Re-seal every secret under a new master key; then restart every process on this store
    /// with SWITCHYARD_MASTER_KEY_FILE pointing at the new file.
    RotateMasterKey {
        /// The new key: 32 random bytes (raw or 64 hex digits), mode 0600.
        #[arg(long, value_name = "FILE")]
        new_key_file: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub enum RoutingCmd {
    /// Mode, state, gate report, per-profile readiness and health.
    Status { slug: String },
    /// Turn on balanced or priority routing (only if the gates hold).
    Activate {
        slug: String,
        #[arg(value_enum)]
        mode: Strategy,
    },
    /// Back to legacy routing (primary only).
    Deactivate { slug: String },
    /// What balanced routing keeps on one key: a turn's calls, or a conversation's turns
    /// while its last call is younger than the window (default: conversation, 10 min).
    Affinity {
        slug: String,
        #[arg(value_enum)]
        mode: AffinityMode,
        /// The conversation window in minutes (1–1440; unchanged when omitted).
        #[arg(long, value_name = "N")]
        window_min: Option<i64>,
    },
    /// Skip keys whose latest quota reading says a window is exhausted or under the reserve,
    /// until that window's reset (default: off).
    QuotaAware {
        slug: String,
        #[arg(value_parser = ["on", "off"])]
        state: String,
        /// Percent of each window to keep in reserve (0–50; unchanged when omitted).
        #[arg(long, value_name = "N")]
        reserve_pct: Option<i64>,
    },
    /// Let SLUG's external Claude Code profiles also serve plain Messages requests from any
    /// client by running the official CLI in print mode (`claude -p`), one process per request
    /// (default: off). Without on/off: show the setting.
    CliBackend {
        slug: String,
        #[arg(value_parser = ["on", "off"])]
        state: Option<String>,
        /// Runs of one profile at once; more requests wait (1–16, default 2; unchanged when omitted).
        #[arg(long, value_name = "N")]
        max_concurrent: Option<i64>,
    },
    /// Set the fallback chain: other connections of the same protocol, in order, tried only
    /// when no profile of SLUG is eligible, before any output (`OTHER=MODEL` asks that hop
    /// for MODEL). Stored inactive until `routing fallback-activate`.
    Fallback {
        slug: String,
        #[arg(value_name = "OTHER[=MODEL]", required_unless_present = "clear")]
        hops: Vec<String>,
        /// Remove the chain.
        #[arg(long, conflicts_with = "hops")]
        clear: bool,
    },
    /// Use the fallback chain (only if every hop has current evidence for its models).
    FallbackActivate { slug: String },
    /// Stop using the fallback chain (it stays stored).
    FallbackDeactivate { slug: String },
}

#[derive(Debug, Subcommand)]
pub enum HealthCmd {
    /// Close a profile's circuits (all, or one model's).
    Reset {
        slug: String,
        profile: String,
        #[arg(long, value_name = "M")]
        model: Option<String>,
    },
}

/// Where a secret comes from: never argv.
#[derive(Debug, Args, Clone, Default)]
pub struct SecretSource {
    /// Read the secret from standard input.
    #[arg(long, conflicts_with = "secret_env")]
    pub secret_stdin: bool,
    /// Read the secret from this environment variable.
    #[arg(long, value_name = "NAME")]
    pub secret_env: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum ConnectionCmd {
    /// Add a connection; with a secret it is a legacy single-key connection (primary profile).
    Add {
        slug: String,
        #[arg(long)]
        protocol: String,
        #[arg(long, value_name = "URL")]
        base_url: String,
        #[arg(long = "model", value_name = "M")]
        models: Vec<String>,
        #[arg(long = "map", value_name = "FROM=TO")]
        mappings: Vec<String>,
        #[arg(long = "header", value_name = "'Name: value'")]
        headers: Vec<String>,
        #[command(flatten)]
        secret: SecretSource,
    },
    /// List connections.
    List,
    /// Show a connection and its profiles.
    Show { slug: String },
    /// Edit a connection; list options replace the whole list.
    Edit {
        slug: String,
        #[arg(long)]
        protocol: Option<String>,
        #[arg(long, value_name = "URL")]
        base_url: Option<String>,
        #[arg(long = "model", value_name = "M")]
        models: Vec<String>,
        #[arg(long = "map", value_name = "FROM=TO")]
        mappings: Vec<String>,
        #[arg(long = "header", value_name = "'Name: value'")]
        headers: Vec<String>,
        /// Remove every header.
        #[arg(long, conflicts_with = "headers")]
        clear_headers: bool,
        /// How long the relay waits for the provider's first byte before answering 504
        /// (1-3600 s; default 300).
        #[arg(long, value_name = "SECS")]
        first_byte_timeout_secs: Option<i64>,
        /// Fail with exit 3 unless the connection is still at this revision.
        #[arg(long, value_name = "N")]
        if_revision: Option<i64>,
    },
    /// Remove a connection, its profiles and their keychain entries.
    Remove { slug: String },
}

#[derive(Debug, Subcommand)]
pub enum ProfileCmd {
    /// Add a credential profile: an API key (default), a subscription token (Claude Code's
    /// `claude setup-token`), or an external account (the official CLI's own login, signed in
    /// with `profile login`).
    Add {
        slug: String,
        #[arg(long)]
        label: String,
        #[arg(long, value_name = "W")]
        weight: Option<i64>,
        /// Lower numbers are tried first in priority mode.
        #[arg(long, value_name = "N")]
        priority: Option<i64>,
        /// api_key (default), token, external, or oauth (a ChatGPT login Switchyard owns; OpenAI connections only, signed in with profile login).
        #[arg(long, value_name = "KIND")]
        kind: Option<String>,
        /// The official client of a token (default claude-code) or external profile (required):
        /// claude-code or codex.
        #[arg(long, value_name = "CLIENT")]
        client: Option<String>,
        /// A token's expiry, RFC 3339 (e.g. 2027-01-31T00:00:00Z): expiring 7 days ahead, then
        /// not used.
        #[arg(long, value_name = "RFC3339")]
        expires: Option<String>,
        #[command(flatten)]
        secret: SecretSource,
    },
    /// Sign a profile in. An external profile: runs the official CLI's own login (Claude Code's
    /// `claude auth login`, Codex's `codex login`) in the profile's config directory, with the
    /// terminal attached; arguments after `--` go to the CLI's login (e.g. `-- --device-auth`).
    /// An oauth profile (`--kind oauth` creates it): a ChatGPT device code Switchyard signs in with.
    Login {
        slug: String,
        profile: String,
        /// `oauth`: a ChatGPT login Switchyard owns and renews itself (OpenAI connections; a
        /// device code to enter in the browser). Creates the profile when it does not exist.
        #[arg(long)]
        kind: Option<String>,
        /// Weight of a profile this login creates.
        #[arg(long, value_name = "W")]
        weight: Option<i64>,
        /// Priority of a profile this login creates.
        #[arg(long, value_name = "N")]
        priority: Option<i64>,
        #[arg(last = true, value_name = "ARGS")]
        args: Vec<String>,
    },
    /// List the profiles of a connection.
    List { slug: String },
    /// Edit a profile (PROFILE is an id or a label).
    Edit {
        slug: String,
        profile: String,
        #[arg(long)]
        label: Option<String>,
        #[arg(long, value_name = "W")]
        weight: Option<i64>,
        #[arg(long, value_name = "N")]
        priority: Option<i64>,
        #[arg(long, conflicts_with = "disable")]
        enable: bool,
        #[arg(long)]
        disable: bool,
        /// Make this profile the primary (the one legacy mode uses).
        #[arg(long)]
        primary: bool,
        #[arg(long, value_name = "N")]
        if_revision: Option<i64>,
    },
    /// Replace a profile's credential (a token: paste the new one; it brings an expired
    /// profile back with its id, weight and history).
    Rotate {
        slug: String,
        profile: String,
        /// The new token's expiry, RFC 3339 (token profiles; without it the expiry is unknown).
        #[arg(long, value_name = "RFC3339")]
        expires: Option<String>,
        #[command(flatten)]
        secret: SecretSource,
    },
    /// Remove a profile and its keychain entry.
    Remove { slug: String, profile: String },
}

/// A clap error that would repeat what was typed (an invalid value, an unexpected argument
/// or subcommand) when that text may be a key: the same error naming the argument, not the
/// text. `None` when clap may print its own (help, version, ordinary typos).
pub fn redacted(e: &clap::Error) -> Option<InvalidInput> {
    let typed = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => vec![s.clone()],
        Some(ContextValue::Strings(v)) => v.clone(),
        _ => Vec::new(),
    };
    let values: Vec<String> =
        [ContextKind::InvalidValue, ContextKind::InvalidSubcommand].into_iter().flat_map(typed).collect();
    let arg = typed(ContextKind::InvalidArg).join(", ");
    let unsafe_value = values.iter().any(|v| echo_safe(v).is_none());
    let unsafe_arg = !arg.is_empty() && echo_safe(&arg).is_none();
    if !unsafe_value && !unsafe_arg {
        return None;
    }
    let expected = match e.get(ContextKind::ValidValue) {
        Some(ContextValue::Strings(v)) if !v.is_empty() => format!(" (expected one of: {})", v.join(", ")),
        _ => String::new(),
    };
    let why = std::error::Error::source(e).map(|s| format!(": {s}")).unwrap_or_default();
    Some(if unsafe_arg {
        InvalidInput::new("argument", format!("unexpected argument {NOT_SHOWN}; see --help"))
    } else if arg.is_empty() {
        InvalidInput::new("command", format!("unrecognized subcommand {NOT_SHOWN}; see --help"))
    } else {
        InvalidInput::new(arg, format!("invalid value {NOT_SHOWN}{expected}{why}"))
    })
}
