use super::*;

fn params(pairs: &[(&str, &str)]) -> Params {
    let mut p = Params::defaults(PARAMS);
    for (k, v) in pairs {
        p.set(PARAMS, k, v).unwrap();
    }
    p
}

#[test]
fn patterns_read_the_last_match_or_a_json_path() {
    let p = Pattern::parse("load.throughput", r"Requests/sec:\s+([0-9.,]+)").unwrap();
    assert_eq!(
        p.find("Requests/sec: 1,234.5\nRequests/sec: 2,000.0\n"),
        Some(2000.0)
    );
    assert_eq!(p.find("nothing"), None);
    let j = Pattern::parse("load.throughput", "json:summary.rates.1").unwrap();
    assert_eq!(j.find(r#"{"summary": {"rates": [1, "2.5"]}}"#), Some(2.5));
    assert_eq!(j.find("not json"), None);
    let err = Pattern::parse("load.throughput", "(unclosed").unwrap_err();
    assert!(
        err.starts_with("load.throughput=\"(unclosed\": not a regular expression"),
        "{err}"
    );
}

#[test]
fn the_default_cell_writes_the_servers_own_setting() {
    let p = params(&[
        ("server_command", "ns-slapd {threads}"),
        ("server_default_threads", "16"),
        ("server_default_setting", "-1"),
    ]);
    let s = server(&p).unwrap();
    assert_eq!(
        (s.threads_setting(16, 2), s.threads_setting(2, 2)),
        ("-1".to_owned(), "2".to_owned())
    );
    assert_eq!(s.program, "ns-slapd");
    assert_eq!(s.comm, vec!["ns-slapd".to_owned()]);
    let per_cpu = params(&[
        ("server_command", "nginx"),
        ("server_default_threads", "nproc"),
    ]);
    assert_eq!(server(&per_cpu).unwrap().default_on(6), Some(6));
    let orphan = params(&[("server_command", "x"), ("server_default_setting", "auto")]);
    assert!(server(&orphan)
        .unwrap_err()
        .contains("needs default_threads"));
    let unprepared = params(&[("server_command", "x {prepared}")]);
    assert!(server(&unprepared).unwrap_err().contains("no prepare step"));
}

#[test]
fn a_load_is_a_builtin_or_a_command_not_both() {
    let both = params(&[("load_builtin", "line"), ("load_command", "wrk")]);
    assert!(load(&both).unwrap_err().contains("name one"));
    let unknown = params(&[("load_command", "wrk {conns}"), ("load_throughput", "(x)")]);
    assert!(load(&unknown)
        .unwrap_err()
        .contains("unknown variable {conns}"));
    assert!(matches!(
        load(&params(&[("load_builtin", "memcached")])),
        Ok(LoadSpec::Memcached)
    ));
}
