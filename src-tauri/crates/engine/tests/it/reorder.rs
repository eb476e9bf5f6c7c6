//! Reordering profiles: one transaction, CAS on every row, the whole list or nothing.

use std::sync::Arc;

use switchyard_engine::{Engine, ErrorCode, NewConnection, NewProfile, OrderEntry, Secret, SystemClock};
use switchyard_vault::MemoryVault;

type TestResult = Result<(), Box<dyn std::error::Error>>;

async fn three_profiles(dir: &std::path::Path) -> Result<Engine, Box<dyn std::error::Error>> {
    let engine = Engine::open_with(dir, Arc::new(MemoryVault::new()), Arc::new(SystemClock)).await?;
    let new = NewConnection {
        slug: "main".into(),
        protocol: "openai".into(),
        base_url: "https://api.example.com/v1".into(),
        models: vec!["gpt-a".into()],
        ..NewConnection::default()
    };
    engine.connection_add(new, Some(Secret::new("sk-reorder-0"))).await?;
    for label in ["b", "c"] {
        let p = NewProfile { label: label.into(), weight: None, priority: None };
        engine.profile_add("main", p, Secret::new(format!("sk-reorder-{label}"))).await?;
    }
    Ok(engine)
}

fn order_of(views: &[switchyard_engine::ProfileView]) -> Vec<OrderEntry> {
    views.iter().map(|p| OrderEntry { id: p.id.clone(), revision: i64::from(p.revision) }).collect()
}

#[tokio::test]
async fn reorder_renumbers_priorities_in_the_given_order() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = three_profiles(dir.path()).await?;
    let mut order = order_of(&engine.profile_list("main").await?);
    order.reverse();
    let views = engine.profile_reorder("main", &order).await?;
    let labels: Vec<_> = views.iter().map(|p| (p.label.as_str(), p.priority)).collect();
    assert_eq!(
        labels,
        vec![("c", 0), ("b", 1), ("primary", 2)],
        "the list comes back in the new order with priorities 0..n"
    );
    Ok(())
}

#[tokio::test]
async fn a_stale_revision_fails_the_whole_reorder() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = three_profiles(dir.path()).await?;
    let before = engine.profile_list("main").await?;
    let mut order = order_of(&before);
    order.reverse();
    order[2].revision -= 1;
    let err = engine.profile_reorder("main", &order).await.err().ok_or("a stale revision must fail")?;
    assert_eq!(err.code(), ErrorCode::Conflict, "stale revision is a conflict: {err}");
    let after = engine.profile_list("main").await?;
    assert_eq!(after, before, "a failed reorder changes nothing, not even the rows before the stale one");
    Ok(())
}

#[tokio::test]
async fn the_order_must_name_every_profile_once() -> TestResult {
    let dir = tempfile::tempdir()?;
    let engine = three_profiles(dir.path()).await?;
    let mut order = order_of(&engine.profile_list("main").await?);
    order.pop();
    let err = engine.profile_reorder("main", &order).await.err().ok_or("a partial order must fail")?;
    assert_eq!(err.code(), ErrorCode::Invalid, "{err}");
    Ok(())
}
