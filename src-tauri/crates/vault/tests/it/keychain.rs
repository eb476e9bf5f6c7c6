//! Real keychain round trip (Secret Service under `dbus-run-session` in the test command).

use switchyard_vault::{Keychain, Locator, Secret, Vault};

#[test]
fn stores_reads_and_deletes_in_the_real_keychain() -> Result<(), Box<dyn std::error::Error>> {
    let kc = Keychain::new();
    kc.check_reachable()?;
    let loc = Locator::for_profile("vault-test", "p_roundtrip", &std::process::id().to_string());
    kc.put(&loc, &Secret::new("sk-canary-vault-roundtrip"))?;
    let got = kc.get(&loc)?;
    assert_eq!(
        got.as_ref().map(Secret::expose),
        Some("sk-canary-vault-roundtrip"),
        "the keychain returns what was stored"
    );
    assert!(kc.delete(&loc)?, "delete reports that an entry existed");
    assert!(kc.get(&loc)?.is_none(), "a deleted entry is gone");
    assert!(!kc.delete(&loc)?, "deleting twice is not an error");
    Ok(())
}
