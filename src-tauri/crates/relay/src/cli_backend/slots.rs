//! The CLI backend's concurrency cap: one semaphore per profile, sized by the connection's
//! `max_concurrent`; a run waits for a permit (within its deadline). A changed cap takes a new
//! semaphore: runs holding the old one finish under it, so for that moment both count.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Every profile's semaphore, by profile id (a few bytes per external profile ever served).
#[derive(Debug, Default)]
pub(crate) struct CliSlots {
    by_profile: Mutex<HashMap<String, (u32, Arc<Semaphore>)>>,
}

impl CliSlots {
    /// Waits for one of `profile_id`'s `cap` run permits.
    pub(crate) async fn acquire(&self, profile_id: &str, cap: u32) -> OwnedSemaphorePermit {
        let semaphore = {
            let mut map = self.by_profile.lock().unwrap_or_else(PoisonError::into_inner);
            let cap = cap.max(1);
            let entry =
                map.entry(profile_id.to_string()).or_insert_with(|| (cap, Arc::new(Semaphore::new(cap as usize))));
            if entry.0 != cap {
                *entry = (cap, Arc::new(Semaphore::new(cap as usize)));
            }
            entry.1.clone()
        };
        loop {
            // Never closed: the semaphore lives in the map or with its holders.
            if let Ok(permit) = semaphore.clone().acquire_owned().await {
                return permit;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_profile_gets_at_most_its_cap_and_profiles_do_not_share() {
        let slots = CliSlots::default();
        let a1 = slots.acquire("a", 2).await;
        let _a2 = slots.acquire("a", 2).await;
        let third = tokio::time::timeout(std::time::Duration::from_millis(50), slots.acquire("a", 2)).await;
        assert!(third.is_err(), "a third run of a waits while two hold permits");
        let other = tokio::time::timeout(std::time::Duration::from_millis(50), slots.acquire("b", 2)).await;
        assert!(other.is_ok(), "another profile has its own permits");
        drop(a1);
        let after = tokio::time::timeout(std::time::Duration::from_millis(50), slots.acquire("a", 2)).await;
        assert!(after.is_ok(), "a permit given back lets the next run in");
    }
}
