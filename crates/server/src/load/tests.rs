//! The checking clients' shared invariants and extras: a client that never connected,
//! a wrong answer and a window with no answer each fail the cell, saying which.

use super::*;

fn client(right: u64, wrong: Option<&str>, failed: Option<&str>) -> Checked {
    let mut c = Checked::default();
    for _ in 0..right {
        c.count_right();
    }
    if let Some(why) = wrong {
        c.count_wrong(Some(why.to_owned()));
    }
    if let Some(why) = failed {
        c.count_failed(why.to_owned());
    }
    c
}

#[test]
fn every_client_right_passes_and_each_broken_invariant_says_which() {
    let noun = ("search", "searches");
    let (a, b) = (client(3, None, Some("timed out")), client(2, None, None));
    assert_eq!(
        verdict([(None, &a), (None, &b)], noun, "went wrong"),
        Ok(())
    );

    let refused = verdict([(None, &a), (Some("refused"), &b)], noun, "went wrong");
    assert_eq!(refused, Err("client 1: refused".to_owned()));

    let bad = client(1, Some("uid 7 for uid 6"), None);
    let wrong = verdict([(None, &a), (None, &bad)], noun, "went wrong");
    assert_eq!(
        wrong,
        Err("1 of 5 searches went wrong (first: uid 7 for uid 6)".to_owned())
    );

    let idle = client(0, None, Some("timed out"));
    let none = verdict([(None, &idle)], noun, "went wrong");
    assert_eq!(none, Err("no search was answered: timed out".to_owned()));
}

#[test]
fn extras_count_clients_and_failures() {
    let (a, b) = (client(3, None, Some("timed out")), client(2, None, None));
    let out = extra([&a, &b], "searches");
    assert_eq!(out["clients"], 2);
    assert_eq!(out["failed_searches"], 1);
    assert_eq!(out["first_failure"], "timed out");
    assert!(!extra([&b], "searches").contains_key("first_failure"));
}
