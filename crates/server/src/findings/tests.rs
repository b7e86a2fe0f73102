use std::collections::BTreeMap;

use harness::decide::{CellRef, Planned};

use super::*;

fn plan(
    file: &str,
    default: serde_json::Value,
    threads: &[usize],
    cores: &[usize],
) -> Vec<CellRef> {
    let mut cells = Vec::new();
    for &c in cores {
        for &t in threads {
            let mut r = CellRef::new(file, VARIANT, t, c);
            r.params
                .insert("server_command".into(), "memcached -t {threads}".into());
            r.params
                .insert("server_default_threads".into(), default.clone());
            cells.push(r);
        }
    }
    cells
}

#[test]
fn every_server_file_gets_its_four_parts_against_its_own_default() {
    let mut cells = plan("server-memcached", 4.into(), &[1, 2, 4, 8, 16], &[1, 2]);
    cells.extend(plan(
        "server-nginx",
        "nproc".into(),
        &[1, 2, 4, 16],
        &[1, 2],
    ));
    let seeds = BTreeMap::new();
    let planned = Planned {
        cells: &cells,
        seeds: &seeds,
    };
    let claims = claims_on(&planned, 2);
    let names: Vec<&str> = claims.iter().map(|c| c.part.as_str()).collect();
    assert_eq!(
        names,
        [
            "server-memcached/threads_past_cpus",
            "server-memcached/recommendation",
            "server-memcached/per_thread_with_cpus_free",
            "server-memcached/where_time_goes",
            "server-nginx/threads_past_cpus",
            "server-nginx/recommendation",
            "server-nginx/per_thread_with_cpus_free",
            "server-nginx/where_time_goes",
        ]
    );
    // memcached on 2 CPUs: threads = CPUs against its own 4; the most threads other
    // than 4 against 2.
    let rec = claims[1].comparison.as_ref().expect("decided by pairs");
    assert_eq!(
        (rec.a.cell.threads, rec.b.cell.threads, rec.a.cell.cores),
        (2, 4, 2)
    );
    let past = claims[0].comparison.as_ref().expect("decided by pairs");
    assert_eq!((past.a.cell.threads, past.b.cell.threads), (16, 2));
    // nginx's default is one per CPU: threads = CPUs is the default, nothing to compare.
    assert!(claims[5].comparison.is_none());
    assert!(claims[5].missing.contains("own default"), "{:?}", claims[5]);
    // 2 CPUs leave none free for part (c).
    assert!(claims[2].comparison.is_none());
}
