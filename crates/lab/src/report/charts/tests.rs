//! The charts' tests: every series and legend drawn, error bars, log axes, ticks.
use super::*;

#[test]
fn draws_every_series_with_its_legend() {
    let series = vec![
        Series {
            name: "global-mutex".into(),
            points: vec![(1.0, 7e6), (2.0, 3.5e6), (4.0, 3e6)],
        },
        Series {
            name: "dashmap".into(),
            points: vec![(1.0, 7e6), (2.0, 13e6), (4.0, 13e6)],
        },
    ];
    let svg = line_chart("lookup, 2 cores", "threads", "ops/s", &series, Some(2.0)).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..80]);
    for text in [
        "global-mutex",
        "dashmap",
        "threads = cores (2)",
        "lookup, 2 cores",
        "ops/s",
    ] {
        assert!(svg.contains(text), "{text} missing");
    }
    assert!(svg.matches("<circle").count() >= 6);
}

#[test]
fn error_bars_are_drawn_and_widen_the_axis() {
    let series = vec![Series {
        name: "dashmap".into(),
        points: vec![(1.0, 100.0), (2.0, 190.0)],
    }];
    let plain = line_chart("t", "threads", "ops/s", &series, None).unwrap();
    let bars = vec![vec![(1.0, 90.0, 110.0), (2.0, 150.0, 400.0)]];
    let with = line_chart_with_bars("t", "threads", "ops/s", &series, &bars, None).unwrap();
    // Three thin lines (stem and two caps) per bar, in the series' colour.
    let bar_lines = |svg: &str| svg.matches("opacity=\"0.8\" stroke=\"#0072B2\"").count();
    assert_eq!(bar_lines(&plain), 0);
    assert_eq!(bar_lines(&with), 6, "{with}");
    // The axis reaches the top of the highest bar (400 > 190 x 1.12).
    assert!(
        with.contains("\n400\n") && !plain.contains("\n400\n"),
        "{with}"
    );
}

#[test]
fn sweep_charts_label_categories() {
    let labels: Vec<String> = ["1", "2", "nproc", "unlimited"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let series = vec![Series {
        name: "semaphore".into(),
        points: vec![(0.0, 5.0), (1.0, 9.0), (2.0, 8.0), (3.0, 4.0)],
    }];
    let svg = sweep_chart_with_bars("K sweep", "slots", &labels, "ops/s", &series, &[]).unwrap();
    for text in ["unlimited", "nproc", "semaphore", "K sweep"] {
        assert!(svg.contains(text), "{text} missing");
    }
}

#[test]
fn a_series_over_two_decades_gets_a_log_axis() {
    let wide = vec![Series {
        name: "driver-v3".into(),
        points: vec![(0.0, 10.0), (1.0, 1e3), (2.0, 1e5)],
    }];
    let labels: Vec<String> = ["1", "100", "5000"].iter().map(|s| s.to_string()).collect();
    let svg = sweep_chart_with_bars("batch", "batch", &labels, "datapoints/s", &wide, &[]).unwrap();
    assert!(svg.contains("datapoints/s (log scale)"), "{svg}");
    let narrow = vec![Series {
        name: "driver-v3".into(),
        points: vec![(0.0, 10.0), (1.0, 500.0)],
    }];
    let svg = sweep_chart_with_bars("batch", "batch", &labels[..2], "ops/s", &narrow, &[]).unwrap();
    assert!(!svg.contains("log scale"), "{svg}");
    assert_eq!(tick(0.0031), "0.003");
    assert_eq!(tick(0.32), "0.3");
    assert_eq!(tick(1000.0), "1.00k");
}

#[test]
fn palette_has_no_light_colour() {
    // Luma below 0.65 of white: readable lines on white (Okabe-Ito yellow, F0E442, is 0.86).
    for c in PALETTE {
        let lum = 0.2126 * c.0 as f64 + 0.7152 * c.1 as f64 + 0.0722 * c.2 as f64;
        assert!(lum / 255.0 < 0.65, "{c:?} is too light");
    }
}

#[test]
fn a_count_axis_labels_whole_numbers_only() {
    // Ticks at halves on a short axis must not print as "0 0 1 2 2 2 3 4 4".
    assert_eq!(whole_tick(&2.0), "2");
    assert_eq!(whole_tick(&0.5), "");
    assert_eq!(whole_tick(&2.5), "");
    let series = vec![Series {
        name: "a".into(),
        points: vec![(1.0, 7e6), (2.0, 3.5e6), (4.0, 3e6)],
    }];
    let svg = line_chart("t", "threads", "ops/s", &series, None).unwrap();
    for n in ["1", "2", "3", "4"] {
        let label = format!("\n{n}\n</text>");
        assert_eq!(svg.matches(&label).count(), 1, "tick {n} in {svg}");
    }
}
