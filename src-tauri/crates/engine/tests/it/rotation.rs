//! Rotation crash safety: a simulated crash after each step, then a restart, leaves a usable
//! profile and no orphan secret in the real keychain.

use crate::common::{keychain_accounts, legacy, open, secret, TestResult};
use switchyard_engine::{EngineError, FaultPoint};

#[tokio::test]
async fn rotation_takes_a_new_locator_and_bumps_the_credential_revision() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = open(dir.path()).await?;
    let created = engine.connection_add(legacy("main"), Some(secret("sk-canary-old"))).await?;
    let before_accounts = keychain_accounts(engine.install_id());
    let rotated = engine.profile_rotate("main", "primary", secret("sk-canary-new")).await?;
    assert_eq!(
        rotated.credential_revision,
        created.profiles[0].credential_revision + 1,
        "rotation bumps the credential revision"
    );
    let after_accounts = keychain_accounts(engine.install_id());
    assert_eq!(after_accounts.len(), 1, "the old secret is deleted after the swap");
    assert_ne!(after_accounts, before_accounts, "the new secret lives under a new locator");
    Ok(())
}

#[tokio::test]
async fn a_crash_after_any_step_leaves_a_usable_profile_and_no_orphan() -> TestResult {
    for point in
        [FaultPoint::AfterJournal, FaultPoint::AfterSecretWrite, FaultPoint::AfterRowSwap, FaultPoint::AfterOldDelete]
    {
        let dir = tempfile::tempdir()?;
        let install_id;
        {
            let engine = open(dir.path()).await?;
            install_id = engine.install_id().to_string();
            engine.connection_add(legacy("main"), Some(secret("sk-canary-old"))).await?;
            engine.arm_fault(Some(point));
            let crashed = engine.profile_rotate("main", "primary", secret("sk-canary-new")).await;
            assert!(
                matches!(crashed, Err(EngineError::Crashed(p)) if p == point),
                "{point:?}: the fault fires: {crashed:?}"
            );
            engine.close().await;
        }
        let restarted = open(dir.path()).await?;
        let detail = restarted.connection_show("main").await?;
        assert_eq!(
            detail.profiles[0].credential.as_str(),
            "present",
            "{point:?}: the profile's secret is readable after restart"
        );
        let accounts = keychain_accounts(&install_id);
        assert_eq!(
            accounts.len(),
            1,
            "{point:?}: start-up removed the orphan secret, leaving exactly the live one: {accounts:?}"
        );
        let rotated_through = matches!(point, FaultPoint::AfterRowSwap | FaultPoint::AfterOldDelete);
        let want_rev = if rotated_through { 2 } else { 1 };
        assert_eq!(
            detail.profiles[0].credential_revision, want_rev,
            "{point:?}: the row is either fully old or fully new"
        );
        // The profile is still usable: a further rotation works and leaves one entry.
        restarted.profile_rotate("main", "primary", secret("sk-canary-third")).await?;
        assert_eq!(keychain_accounts(&install_id).len(), 1, "{point:?}: rotation after recovery leaves one entry");
        restarted.connection_remove("main").await?;
    }
    Ok(())
}
