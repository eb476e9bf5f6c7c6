//! What the engine returns to front ends: JSON for the CLI, IPC for the desktop (specta
//! types). Never database rows, never secret material. Small integers are i32 and times are
//! RFC 3339 text so the TypeScript bindings stay exact.

use serde::Serialize;
use specta::Type;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct HeaderView {
    pub name: String,
    pub value: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ModelMapping {
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ConnectionView {
    pub id: String,
    pub slug: String,
    pub protocol: String,
    pub base_url: String,
    pub headers: Vec<HeaderView>,
    pub models: Vec<String>,
    pub mapping: Vec<ModelMapping>,
    pub basis_fingerprint: String,
    pub routing_mode: switchyard_core::RoutingMode,
    pub routing_state: switchyard_core::RoutingState,
    pub revision: i32,
    pub profile_count: i32,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ProfileView {
    pub id: String,
    pub connection_id: String,
    pub label: String,
    pub weight: i32,
    pub priority: i32,
    pub enabled: bool,
    pub primary: bool,
    /// `unknown` when the keychain could not be asked.
    pub credential: switchyard_core::states::CredentialPresence,
    pub credential_revision: i32,
    pub revision: i32,
    pub created_at: String,
    pub updated_at: String,
    /// What the credential is: `api_key`, `token` or `external`.
    pub kind: switchyard_core::states::ProfileKind,
    /// The credential's health now (named apart from the circuits `routing status` calls `health`).
    pub credential_health: CredentialHealthView,
    /// The official client of a `token` or `external` profile (`claude-code`, `codex`).
    pub client: Option<switchyard_core::states::OfficialClient>,
    /// `external`: the directory the official CLI keeps its login in (Switchyard checks only
    /// whether the CLI's credential file exists there).
    pub config_dir: Option<String>,
    /// `oauth`: what is known about the login besides its tokens (never a token).
    pub login: Option<LoginView>,
}

/// A device code to show while an owned login signs in (the desktop; the CLI prints the same).
/// The code's own id stays in the engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct DeviceCodeView {
    /// Where the user signs in and enters the code.
    pub verification_url: String,
    /// The one-time code to enter there.
    pub user_code: String,
    /// How often to check whether it was approved (seconds).
    pub interval_secs: i32,
}

/// A browser sign-in to open (the desktop): only the authorize URL; its verifier and state stay
/// in the engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct BrowserSignInView {
    /// The issuer's authorize page to open in the browser.
    pub authorize_url: String,
}

/// An owned login as front ends show it (docs/design.md, section 14).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct LoginView {
    /// The ChatGPT account it belongs to, once signed in.
    pub account_id: Option<String>,
    /// The plan its id token named, if any.
    pub plan: Option<String>,
    /// Sign-ins so far (0: never signed in); a refresh keeps it.
    pub generation: i32,
    /// When the last refresh (or the sign-in) was written (RFC 3339).
    pub refreshed_at: Option<String>,
    /// How the last refresh went: `succeeded`, `failed` or `rejected`.
    pub last_refresh: Option<String>,
    /// No refresh is tried before this (a 429's `Retry-After`, a transient backoff; RFC 3339).
    pub blocked_until: Option<String>,
}

/// A credential's health as front ends show it (docs/design.md, "credential health").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct CredentialHealthView {
    /// `static`, `ok`, `expiring`, `expired` or `missing`.
    pub state: switchyard_core::states::CredentialHealthState,
    /// Why, in plain words (`None` for `static` and a plain `ok`).
    pub reason: Option<String>,
    /// The expiry it was judged by (RFC 3339), if known.
    pub expires_at: Option<String>,
}

impl From<switchyard_core::credential_health::CredentialHealth> for CredentialHealthView {
    fn from(h: switchyard_core::credential_health::CredentialHealth) -> Self {
        CredentialHealthView {
            state: h.state,
            reason: h.reason.map(str::to_string),
            expires_at: h.expires_at_ms.map(crate::clock::rfc3339),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ConnectionDetail {
    pub connection: ConnectionView,
    pub profiles: Vec<ProfileView>,
}

/// What a removal deleted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct Removal {
    pub slug: String,
    pub profiles_removed: i32,
    pub secrets_deleted: i32,
    /// Secrets the keychain could not delete now; start-up clean-up retries them.
    pub secrets_pending: i32,
}

pub(crate) fn small(n: i64) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}
