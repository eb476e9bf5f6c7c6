//! Connection and profile lifecycle on a real SQLite file and the real keychain.

use crate::common::{keychain_accounts, legacy, open, profile, secret, TestResult};
use switchyard_engine::{ConnectionEdit, EngineError, ErrorCode, ProfileEdit};

#[tokio::test]
async fn legacy_connection_gets_a_primary_and_stays_legacy() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    let detail = engine.connection_add(legacy("main"), Some(secret("sk-canary-legacy-0001"))).await?;
    assert_eq!(detail.connection.routing_mode.as_str(), "legacy", "a new connection routes as legacy");
    assert_eq!(detail.profiles.len(), 1, "the legacy key becomes one profile");
    assert!(detail.profiles[0].primary, "the legacy key is the primary");
    assert_eq!(detail.profiles[0].credential.as_str(), "present", "its secret is in the keychain");

    engine.profile_add("main", profile("backup", 3), secret("sk-canary-backup-0002")).await?;
    let after = engine.connection_show("main").await?;
    assert_eq!(after.connection.routing_mode.as_str(), "legacy", "adding a profile never changes the routing mode");
    assert_eq!(after.profiles.iter().filter(|p| p.primary).count(), 1, "exactly one primary");
    assert_eq!(keychain_accounts(engine.install_id()).len(), 2, "one keychain entry per profile");
    Ok(())
}

#[tokio::test]
async fn bad_input_is_refused_and_changes_nothing() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    engine.connection_add(legacy("main"), Some(secret("sk-canary-a"))).await?;
    let before = engine.connection_show("main").await?;

    let mut bad_protocol = legacy("other");
    bad_protocol.protocol = "vertex".into();
    let mut bad_url = legacy("other");
    bad_url.base_url = "ftp://x".into();
    let mut bad_header = legacy("other");
    bad_header.headers = vec!["no-colon".into()];
    for (case, field) in [(bad_protocol, "protocol"), (bad_url, "base_url"), (bad_header, "header")] {
        match engine.connection_add(case, Some(secret("sk-canary-x"))).await {
            Err(EngineError::Invalid(e)) => assert_eq!(e.field, field, "the error names the field"),
            other => panic!("expected invalid {field}, got {other:?}"),
        }
    }
    let dup = engine.connection_add(legacy("main"), None).await;
    assert_eq!(dup.err().map(|e| e.code()), Some(ErrorCode::Conflict), "duplicate slug is a conflict");
    let zero = engine.profile_add("main", profile("z", 0), secret("sk-canary-z")).await;
    assert_eq!(zero.err().map(|e| e.code()), Some(ErrorCode::Invalid), "weight 0 is invalid");
    let dup_label = engine.profile_add("main", profile("primary", 1), secret("sk-canary-z")).await;
    assert_eq!(dup_label.err().map(|e| e.code()), Some(ErrorCode::Conflict), "labels are unique per connection");
    let unknown = engine.profile_edit("main", "ghost", ProfileEdit::default()).await;
    assert_eq!(unknown.err().map(|e| e.code()), Some(ErrorCode::NotFound), "unknown profile is not found");

    assert_eq!(engine.connection_show("main").await?, before, "refused input leaves the connection as it was");
    assert_eq!(engine.connection_list().await?.len(), 1, "no connection was created by refused input");
    assert_eq!(keychain_accounts(engine.install_id()).len(), 1, "refused input leaves no secret behind");
    Ok(())
}

#[tokio::test]
async fn edits_are_compare_and_swap_and_recompute_the_basis() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    let created = engine.connection_add(legacy("main"), Some(secret("sk-canary-a"))).await?;
    let rev = i64::from(created.connection.revision);
    let edit = ConnectionEdit {
        base_url: Some("https://proxy.example.com/v1".into()),
        if_revision: Some(rev),
        ..Default::default()
    };
    let edited = engine.connection_edit("main", edit).await?;
    assert_ne!(edited.basis_fingerprint, created.connection.basis_fingerprint, "a new endpoint is a new basis");
    let stale = ConnectionEdit {
        base_url: Some("https://other.example.com".into()),
        if_revision: Some(rev),
        ..Default::default()
    };
    let err = engine.connection_edit("main", stale).await.err();
    assert!(
        matches!(err, Some(EngineError::Conflict { expected, .. }) if expected == rev),
        "stale revision conflicts: {err:?}"
    );
    assert_eq!(
        engine.connection_show("main").await?.connection.base_url,
        "https://proxy.example.com/v1",
        "the stale edit wrote nothing"
    );

    let p = &created.profiles[0];
    let stale_profile =
        ProfileEdit { weight: Some(4), if_revision: Some(i64::from(p.revision) + 7), ..Default::default() };
    let err = engine.profile_edit("main", &p.id, stale_profile).await.err().map(|e| e.code());
    assert_eq!(err, Some(ErrorCode::Conflict), "a stale profile edit conflicts");
    Ok(())
}

#[tokio::test]
async fn primary_rules_and_removal_delete_secrets() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    engine.connection_add(legacy("main"), Some(secret("sk-canary-a"))).await?;
    engine.profile_add("main", profile("second", 2), secret("sk-canary-b")).await?;

    let refused = engine.profile_remove("main", "primary").await;
    match refused {
        Err(EngineError::Precondition(msg)) => {
            assert!(msg.contains("--primary"), "the message says how to fix it: {msg}")
        }
        other => panic!("removing the primary must be refused, got {other:?}"),
    }
    let disable_primary =
        engine.profile_edit("main", "primary", ProfileEdit { enabled: Some(false), ..Default::default() }).await;
    assert_eq!(
        disable_primary.err().map(|e| e.code()),
        Some(ErrorCode::Precondition),
        "the primary cannot be disabled"
    );

    engine.profile_edit("main", "second", ProfileEdit { make_primary: true, ..Default::default() }).await?;
    let profiles = engine.profile_list("main").await?;
    let primaries: Vec<_> = profiles.iter().filter(|p| p.primary).map(|p| p.label.as_str()).collect();
    assert_eq!(primaries, vec!["second"], "promotion moves the primary flag");

    let removed = engine.profile_remove("main", "primary").await?;
    assert_eq!(removed.secrets_deleted, 1, "removing a profile deletes its secret");
    assert_eq!(keychain_accounts(engine.install_id()).len(), 1, "only the remaining profile's secret is left");

    let removal = engine.connection_remove("main").await?;
    assert_eq!((removal.profiles_removed, removal.secrets_deleted), (1, 1), "connection removal deletes everything");
    assert!(keychain_accounts(engine.install_id()).is_empty(), "no keychain entry survives its connection");
    Ok(())
}

#[tokio::test]
async fn two_data_dirs_never_share_keychain_entries() -> TestResult {
    let (a, b) = (tempfile::tempdir()?, tempfile::tempdir()?);
    let ea = open(a.path()).await?;
    let eb = open(b.path()).await?;
    assert_ne!(ea.install_id(), eb.install_id(), "each data dir has its own install id");
    ea.connection_add(legacy("main"), Some(secret("sk-canary-a"))).await?;
    assert!(keychain_accounts(eb.install_id()).is_empty(), "the other install sees none of these entries");
    let reopened = open(a.path()).await?;
    assert_eq!(reopened.install_id(), ea.install_id(), "the install id is stable across opens");
    Ok(())
}

/// A `gemini` connection is stored like the other two (migration 0012 widened the table's CHECK),
/// with its key in the keychain and its protocol and base read back as given.
#[tokio::test]
async fn a_gemini_connection_is_stored_with_its_key_in_the_keychain() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    let mut new = legacy("gem");
    new.protocol = "gemini".into();
    new.base_url = "https://generativelanguage.googleapis.com".into();
    let detail = engine.connection_add(new, Some(secret("sk-canary-gemini-0001"))).await?;
    assert_eq!(detail.connection.protocol, "gemini", "the protocol is stored as given");
    assert_eq!(
        detail.connection.base_url, "https://generativelanguage.googleapis.com",
        "the base carries no version: the client's v1beta/ is kept"
    );
    assert_eq!(detail.profiles.len(), 1, "the legacy key becomes one profile");
    assert_eq!(keychain_accounts(engine.install_id()).len(), 1, "its key is in the keychain");
    let listed = engine.connection_list().await?;
    assert_eq!(listed.len(), 1, "the connection is listed");
    Ok(())
}
