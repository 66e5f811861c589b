//! The machine hierarchy query. With `FAKE_HOSTS=k`, rank r pretends to live on
//! host r % k (through OXMPI_HOST_ID, before MPI_Init), so the query must answer
//! two levels; it only talks to the process manager, so no network is needed.

use oxmpi_core::runtime::{self, ThreadLevel};
use oxmpi_tests::check;

fn main() {
    let fake: Option<u32> = std::env::var("FAKE_HOSTS")
        .ok()
        .and_then(|v| v.parse().ok());
    if let (Some(k), Ok(r)) = (fake, std::env::var("PMI_RANK")) {
        let r: u32 = r.parse().unwrap();
        // Single-threaded at this point: nothing else reads the environment.
        std::env::set_var("OXMPI_HOST_ID", format!("fake-host-{}", r % k));
    }
    runtime::init(ThreadLevel::Single).expect("MPI_Init");
    let e = runtime::engine().unwrap();
    let (rank, size) = (e.rank() as i32, e.size() as i32);
    let levels = e.cluster_info();
    check!(
        rank,
        levels[0].cluster_id == 0 && levels[0].rank == rank && levels[0].size == size,
        "level 0 {:?}",
        levels[0]
    );
    // Real hosts (network namespaces launched by mpiexec -hosts): two levels,
    // host ids in 0..k.
    if let Some(k) = std::env::var("EXPECT_HOSTS")
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
    {
        check!(
            rank,
            levels.len() == 2 && (0..k).contains(&levels[1].cluster_id),
            "levels on {k} hosts: {levels:?}"
        );
        println!("hierarchy: rank {rank} {levels:?}");
        runtime::finalize().unwrap();
        return;
    }
    match fake {
        Some(k) if k > 1 && size > 1 => {
            check!(rank, levels.len() == 2, "levels {levels:?}");
            let host = rank % k as i32;
            let on_host: Vec<i32> = (0..size).filter(|r| r % k as i32 == host).collect();
            check!(
                rank,
                levels[1].cluster_id == host,
                "host id {:?}",
                levels[1]
            );
            check!(
                rank,
                on_host[levels[1].rank as usize] == rank && levels[1].size == on_host.len() as i32,
                "rank on host {:?}",
                levels[1]
            );
        }
        _ => check!(
            rank,
            levels.len() == 1,
            "one SMP must answer one level: {levels:?}"
        ),
    }
    println!("hierarchy: rank {rank} {levels:?}");
    runtime::finalize().unwrap();
}
