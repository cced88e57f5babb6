//! Rate-limit counters: a window allows exactly its limit, a new window
//! starts afresh, and on PostgreSQL the limit holds across processes.

use domain::rate_limit::Policy;

use crate::harness::TestDb;
use crate::on_both;

async fn a_window_allows_exactly_its_limit(t: TestDb) {
    let rl = &t.stores.rate_limits;
    let p = Policy::census_writes(20);
    for i in 1..=20 {
        assert_eq!(
            rl.hit(&p, "census_writes:key_a", 120).await.unwrap(),
            Some(i)
        );
    }
    assert_eq!(rl.hit(&p, "census_writes:key_a", 179).await.unwrap(), None);
    // Another key has its own counter; the next window starts afresh.
    assert_eq!(
        rl.hit(&p, "census_writes:key_b", 179).await.unwrap(),
        Some(1)
    );
    assert_eq!(
        rl.hit(&p, "census_writes:key_a", 180).await.unwrap(),
        Some(1)
    );
}
on_both!(a_window_allows_exactly_its_limit);

async fn the_limit_holds_across_processes(t: TestDb) {
    if matches!(t.db, store_diesel::Database::Sqlite { .. }) {
        // SQLite serves one process; its counters are in-process.
        return;
    }
    let p = Policy::requests(120);
    let pools = [t.stores.clone(), t.second_process()];
    let mut tasks = Vec::new();
    for i in 0..300usize {
        let rl = pools[i % 2].rate_limits.clone();
        let p = p.clone();
        tasks.push(tokio::spawn(async move {
            rl.hit(&p, "requests:key_shared", 600).await.unwrap()
        }));
    }
    let mut allowed = 0;
    for task in tasks {
        if task.await.unwrap().is_some() {
            allowed += 1;
        }
    }
    assert_eq!(allowed, 120);
}
on_both!(the_limit_holds_across_processes);

async fn concurrent_hits_on_many_buckets_stay_exact_in_every_bucket(t: TestDb) {
    // Two processes hit five buckets at once, each in its own order (the
    // hits a process batches into one statement cross the other's), and
    // every bucket admits exactly its limit. SQLite serves one process.
    let p = Policy::requests(30);
    let second = match t.db {
        store_diesel::Database::Sqlite { .. } => t.stores.clone(),
        store_diesel::Database::Postgres { .. } => t.second_process(),
    };
    let pools = [t.stores.clone(), second];
    let mut tasks = Vec::new();
    for i in 0..400usize {
        let rl = pools[i % 2].rate_limits.clone();
        let p = p.clone();
        let bucket = if i % 2 == 0 { i % 5 } else { 4 - i % 5 };
        tasks.push(tokio::spawn(async move {
            let r = rl.hit(&p, &format!("requests:key_{bucket}"), 600).await;
            (bucket, r.unwrap())
        }));
    }
    let mut allowed = [0u32; 5];
    for task in tasks {
        let (bucket, count) = task.await.unwrap();
        if let Some(n) = count {
            assert!((1..=30).contains(&n), "bucket {bucket} counted {n}");
            allowed[bucket] += 1;
        }
    }
    assert_eq!(allowed, [30; 5]);
}
on_both!(concurrent_hits_on_many_buckets_stay_exact_in_every_bucket);
