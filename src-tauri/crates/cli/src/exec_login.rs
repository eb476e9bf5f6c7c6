//! `exec` on an external login (docs/design.md, section 12; invariant 20): the official CLI runs
//! with the account's own config directory and sends its own credential; the relay learns which
//! account from `x-switchyard-profile` and passes that credential through unchanged. The relay
//! token reaches the relay in `x-switchyard-token` — never where the CLI's login goes, which it
//! would replace — and each launch tags its requests `x-switchyard-tag-launch: <launch id>`, so
//! `--failover` finds what the relay recorded for it.
//!
//! - Claude Code: `CLAUDE_CONFIG_DIR`, `ANTHROPIC_BASE_URL`, the three headers appended to
//!   `ANTHROPIC_CUSTOM_HEADERS` (the user's own lines kept, any `x-switchyard-*` line of theirs
//!   dropped); `ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`, `CLAUDE_CODE_OAUTH_TOKEN` and
//!   `CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR` removed (each would replace the login).
//! - Codex: `CODEX_HOME`, and `-c` overrides for a provider with `requires_openai_auth = true`,
//!   `wire_api = "responses"`, the relay as `base_url`, the token in `env_http_headers` (from
//!   `SWITCHYARD_RELAY_TOKEN`, so never in argv), the profile and launch in `http_headers`, and
//!   no `env_key` (it would replace the login); `OPENAI_API_KEY` and `CODEX_API_KEY` removed.
//!
//! The token is in the child's environment only, never in argv or output.

use std::sync::Arc;
use std::time::Duration;

use switchyard_engine::{Engine, EngineError, ExecAccount, InvalidInput, OfficialClient, Secret, LAUNCH_TAG};

use crate::exec_cmd::{program_name, run_child, toml_string, ExecArgs, RelayFor, TOKEN_ENV};
use crate::output::{note, Output};

/// Variables that would replace Claude Code's own login.
const CLAUDE_CREDENTIAL_VARS: [&str; 4] =
    ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR"];

/// Variables that would replace Codex's own login.
const CODEX_CREDENTIAL_VARS: [&str; 2] = ["OPENAI_API_KEY", "CODEX_API_KEY"];

/// How long `--failover` waits for a relay in another process to write a launch's rows.
const LEDGER_SETTLE: Duration = Duration::from_secs(2);

/// The official client `exec` runs on an external login, if it does: the command is Claude Code
/// or Codex (by its file name; with `--profile`, any command gets the connection's client) and
/// the connection has external logins of that client, or `--profile` names one.
pub(crate) async fn wanted(
    engine: &Arc<Engine>,
    slug: &str,
    protocol: &str,
    program: &str,
    a: &ExecArgs,
) -> Result<Option<OfficialClient>, EngineError> {
    let by_name = match program_name(program) {
        Some("claude") => Some(OfficialClient::ClaudeCode),
        Some("codex") => Some(OfficialClient::Codex),
        _ => None,
    };
    let of_protocol = OfficialClient::ALL.into_iter().find(|c| c.protocol().as_str() == protocol);
    let Some(client) = by_name.or(a.profile.as_ref().and(of_protocol)) else { return Ok(None) };
    if client.protocol().as_str() != protocol {
        if a.profile.is_some() {
            return Err(EngineError::Invalid(InvalidInput::new(
                "profile",
                format!("{client} speaks {}; connection '{slug}' is {protocol}", client.protocol().as_str()),
            )));
        }
        return Ok(None);
    }
    if a.profile.is_some() || engine.exec_has_accounts(slug, client).await? {
        Ok(Some(client))
    } else {
        Ok(None)
    }
}

/// Launches the command on the chosen account; with `--failover`, again on the next account
/// after a limit refusal, at most once per account. Returns the last launch's exit code.
pub(crate) async fn run(
    engine: &Arc<Engine>,
    a: &ExecArgs,
    client: OfficialClient,
    relay: RelayFor,
) -> Result<Output, EngineError> {
    let token = match engine.relay_token(false).await {
        Ok(t) => t,
        Err(e) => {
            relay.stop().await;
            return Err(e);
        }
    };
    let mut tried: Vec<String> = Vec::new();
    let mut last: Option<(u8, ExecAccount)> = None;
    loop {
        let named = if tried.is_empty() { a.profile.as_deref() } else { None };
        let account = match engine.exec_account(&a.slug, client, named, &tried).await {
            Ok(account) => account,
            Err(e) => {
                relay.stop().await;
                let Some((code, _)) = last else { return Err(e) };
                note(&format!("switchyard exec: no other account to run on: {}", crate::render::error::message(&e)));
                return Ok(Output::Exit(code));
            }
        };
        if let Some((_, previous)) = &last {
            note(&format!("switchyard exec: running again on account '{}'", account.label));
            tracing::info!(from = %previous.label, to = %account.label, "exec failover");
        }
        let launch = engine.exec_launch_id(tried.len());
        let since_ms = engine.now_ms();
        let code = launch_on(&account, a, &relay.root, &launch, &token).await?;
        if code == 0 || !a.failover {
            relay.stop().await;
            return Ok(Output::Exit(code));
        }
        relay.flush().await;
        let settle = if relay.embedded.is_some() { Duration::ZERO } else { LEDGER_SETTLE };
        let refusal = engine.exec_limit_refusal(&a.slug, &account.profile_id, &launch, since_ms, settle).await;
        let refusal = match refusal {
            Ok(r) => r,
            Err(e) => {
                relay.stop().await;
                return Err(e);
            }
        };
        let Some(refusal) = refusal else {
            // No limit refusal for this launch: its exit code is its own.
            relay.stop().await;
            return Ok(Output::Exit(code));
        };
        let until = refusal.until.as_deref().map(|u| format!(", cooling until {u}")).unwrap_or_default();
        let status = refusal.status.map(|s| format!("{s} ")).unwrap_or_default();
        note(&format!(
            "switchyard exec: account '{}' hit its limit ({status}{}{until}); the command exited {code}",
            account.label, refusal.kind
        ));
        tried.push(account.profile_id.clone());
        last = Some((code, account));
    }
}

/// One launch of the command on `account`, tagged `launch`.
async fn launch_on(
    account: &ExecAccount,
    a: &ExecArgs,
    root: &str,
    launch: &str,
    token: &Secret,
) -> Result<u8, EngineError> {
    let mut argv = a.command.clone();
    let program = argv.remove(0);
    let mut cmd = tokio::process::Command::new(&program);
    cmd.env(account.env_var, &account.config_dir).env("SWITCHYARD_RELAY_URL", root);
    match account.client {
        OfficialClient::ClaudeCode => {
            for var in CLAUDE_CREDENTIAL_VARS {
                cmd.env_remove(var);
            }
            let own = std::env::var("ANTHROPIC_CUSTOM_HEADERS").unwrap_or_default();
            cmd.env("ANTHROPIC_BASE_URL", root)
                .env("ANTHROPIC_CUSTOM_HEADERS", custom_headers(&own, token, &account.profile_id, launch));
            cmd.args(&argv);
        }
        OfficialClient::Codex => {
            for var in CODEX_CREDENTIAL_VARS {
                cmd.env_remove(var);
            }
            cmd.env(TOKEN_ENV, token.expose());
            for kv in codex_overrides(root, &account.profile_id, launch) {
                cmd.arg("-c").arg(kv);
            }
            cmd.args(&argv);
        }
    }
    run_child(&program, cmd).await
}

/// `ANTHROPIC_CUSTOM_HEADERS` for a launch: the user's own lines (without any `x-switchyard-*`
/// line), then the relay token, the profile and the launch tag, one `Name: value` per line.
fn custom_headers(own: &str, token: &Secret, profile_id: &str, launch: &str) -> String {
    let mut lines: Vec<String> = own
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().to_ascii_lowercase().starts_with("x-switchyard-"))
        .map(str::to_string)
        .collect();
    lines.push(format!("x-switchyard-token: {}", token.expose()));
    lines.push(format!("x-switchyard-profile: {profile_id}"));
    lines.push(format!("x-switchyard-tag-{LAUNCH_TAG}: {launch}"));
    lines.join("\n")
}

/// Codex's `-c` overrides: a provider on the relay that uses the ChatGPT login
/// (`requires_openai_auth`), the token from [`TOKEN_ENV`], no `env_key`.
fn codex_overrides(root: &str, profile_id: &str, launch: &str) -> Vec<String> {
    vec![
        "model_provider=\"switchyard\"".to_string(),
        "model_providers.switchyard.name=\"Switchyard\"".to_string(),
        format!("model_providers.switchyard.base_url={}", toml_string(&format!("{root}/v1"))),
        "model_providers.switchyard.wire_api=\"responses\"".to_string(),
        "model_providers.switchyard.requires_openai_auth=true".to_string(),
        format!("model_providers.switchyard.env_http_headers={{\"x-switchyard-token\"=\"{TOKEN_ENV}\"}}"),
        format!(
            "model_providers.switchyard.http_headers={{\"x-switchyard-profile\"={},\"x-switchyard-tag-{LAUNCH_TAG}\"={}}}",
            toml_string(profile_id),
            toml_string(launch)
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_user_s_custom_headers_are_kept_and_relay_lines_replaced() {
        let token = Secret::new("sy_token");
        let got = custom_headers("x-team: a\nX-Switchyard-Token: old\n\nx-other: b", &token, "p_1", "l-1");
        assert_eq!(
            got,
            "x-team: a\nx-other: b\nx-switchyard-token: sy_token\nx-switchyard-profile: p_1\nx-switchyard-tag-launch: l-1",
            "the user's lines first, their relay lines dropped, ours after"
        );
    }

    #[test]
    fn codex_gets_a_login_provider_without_env_key_and_no_token_in_argv() {
        let args = codex_overrides("http://127.0.0.1:1/c/s", "p_1", "l-1").join(" ");
        assert!(args.contains("requires_openai_auth=true"), "{args}");
        assert!(args.contains("base_url=\"http://127.0.0.1:1/c/s/v1\""), "{args}");
        assert!(args.contains("\"x-switchyard-token\"=\"SWITCHYARD_RELAY_TOKEN\""), "the variable's name only: {args}");
        assert!(!args.contains("env_key"), "no env_key: it would replace the login: {args}");
    }
}
