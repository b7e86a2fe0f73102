//! A tiny server with a worker-thread setting, and a load for it, for the tests and for
//! `benches/server-tiny.toml` (the smoke run's server: it needs no package).
//!
//! The server reads request lines on any number of connections and hands each to a pool
//! of `threads` workers, which spin for `spin_us` (CPU work, so its threads contend for
//! the cell's cores as a real server's do), sleep for `sleep_us` (a wait, as on a disk or
//! a backend) and write one reply line. The load (`client`) keeps `clients` connections
//! busy for `seconds` and prints `requests/sec: <x>` and `errors: <n>`, the lines
//! `server-tiny.toml`'s patterns read. `own_mask` makes the server widen its own CPU mask
//! to every CPU, as a server with an affinity setting of its own would: the lab must
//! refuse it. Nothing here is measured by itself; `lab tiny-server` and the
//! `lab-tiny-server` program run it.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// What the tiny server or its load is told.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Run the load instead of the server.
    pub client: bool,
    /// Worker threads (the server's setting).
    pub threads: usize,
    /// The port.
    pub port: u16,
    /// CPU work per request, microseconds.
    pub spin_us: u64,
    /// Sleep per request, microseconds.
    pub sleep_us: u64,
    /// Widen the server's CPU mask to every CPU.
    pub own_mask: bool,
    /// The load's connections.
    pub clients: usize,
    /// The load's run, seconds.
    pub seconds: f64,
}

/// Parses `--threads 4 --port 8080 --spin-us 20 ...`; the error names the word and what
/// is accepted.
pub fn parse(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        client: false,
        threads: 1,
        port: 0,
        spin_us: 20,
        sleep_us: 0,
        own_mask: false,
        clients: 4,
        seconds: 1.0,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .ok_or_else(|| format!("{flag}: needs a value"))
                .cloned()
        };
        let number = |v: String| -> Result<u64, String> {
            v.parse()
                .map_err(|_| format!("{flag} {v:?}: expected a whole number"))
        };
        match flag.as_str() {
            "--client" => o.client = true,
            "--own-mask" => o.own_mask = true,
            "--threads" => o.threads = number(value()?)?.max(1) as usize,
            "--port" => o.port = number(value()?)? as u16,
            "--spin-us" => o.spin_us = number(value()?)?,
            "--sleep-us" => o.sleep_us = number(value()?)?,
            "--clients" => o.clients = number(value()?)?.max(1) as usize,
            "--seconds" => {
                let v = value()?;
                o.seconds = v
                    .parse()
                    .map_err(|_| format!("--seconds {v:?}: expected a number"))?;
            }
            other => return Err(format!(
                "{other:?}: not accepted: --threads, --port, --spin-us, --sleep-us, --own-mask, --client, --clients, --seconds"
            )),
        }
    }
    if o.port == 0 {
        return Err("--port: needed".to_owned());
    }
    Ok(o)
}

/// Runs what `o` says until killed (the server) or done (the load).
pub fn run(o: &Options) -> Result<(), String> {
    if o.client {
        client(o)
    } else {
        serve(o)
    }
}

type Job = (String, TcpStream);

fn serve(o: &Options) -> Result<(), String> {
    if o.own_mask {
        let all = crate::procstat::machine_cpus();
        // Before any thread starts: they inherit the mask.
        crate::procstat::set_thread_cpus(&all)?;
    }
    let listener =
        TcpListener::bind(("127.0.0.1", o.port)).map_err(|e| format!("port {}: {e}", o.port))?;
    let (tx, rx) = mpsc::channel::<Job>();
    let rx = Arc::new(Mutex::new(rx));
    for i in 0..o.threads {
        let rx = Arc::clone(&rx);
        let (spin, sleep) = (
            Duration::from_micros(o.spin_us),
            Duration::from_micros(o.sleep_us),
        );
        std::thread::Builder::new()
            .name(format!("tiny-worker-{i}"))
            .spawn(move || loop {
                let Ok((line, mut stream)) = rx.lock().unwrap_or_else(|e| e.into_inner()).recv()
                else {
                    return;
                };
                let start = Instant::now();
                while start.elapsed() < spin {
                    std::hint::spin_loop();
                }
                std::thread::sleep(sleep);
                let _ = stream.write_all(format!("ok {}\n", line.len()).as_bytes());
            })
            .map_err(|e| e.to_string())?;
    }
    for stream in listener.incoming().flatten() {
        let tx = tx.clone();
        let _ = std::thread::Builder::new()
            .name("tiny-conn".into())
            .spawn(move || {
                let Ok(writer) = stream.try_clone() else {
                    return;
                };
                for line in BufReader::new(stream).lines() {
                    let Ok(line) = line else { return };
                    let Ok(w) = writer.try_clone() else { return };
                    if tx.send((line, w)).is_err() {
                        return;
                    }
                }
            });
    }
    Ok(())
}

fn client(o: &Options) -> Result<(), String> {
    let done = Arc::new(AtomicBool::new(false));
    let (ok, errors) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let start = Instant::now();
    let handles: Vec<_> = (0..o.clients)
        .map(|_| {
            let (done, ok, errors, port) = (done.clone(), ok.clone(), errors.clone(), o.port);
            std::thread::spawn(move || {
                let Ok(stream) = TcpStream::connect(("127.0.0.1", port)) else {
                    errors.fetch_add(1, Ordering::Relaxed);
                    return;
                };
                let mut writer = stream.try_clone().expect("a clone of a connected stream");
                let mut reader = BufReader::new(stream);
                let mut reply = String::new();
                while !done.load(Ordering::Relaxed) {
                    reply.clear();
                    let answered = writer.write_all(b"GET\n").is_ok()
                        && reader.read_line(&mut reply).is_ok_and(|n| n > 0);
                    let counter = if answered { &ok } else { &errors };
                    counter.fetch_add(1, Ordering::Relaxed);
                    if !answered {
                        return;
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(o.seconds.max(0.01)));
    done.store(true, Ordering::Relaxed);
    for h in handles {
        let _ = h.join();
    }
    let elapsed = start.elapsed().as_secs_f64();
    println!("requests: {}", ok.load(Ordering::Relaxed));
    println!(
        "requests/sec: {:.1}",
        ok.load(Ordering::Relaxed) as f64 / elapsed
    );
    println!("errors: {}", errors.load(Ordering::Relaxed));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn options_parse_and_refuse_what_they_do_not_know() {
        let o = parse(&args("--threads 4 --port 9000 --sleep-us 100")).unwrap();
        assert_eq!(
            (o.threads, o.port, o.sleep_us, o.client),
            (4, 9000, 100, false)
        );
        assert!(parse(&args("--threads 4")).unwrap_err().contains("--port"));
        assert!(parse(&args("--port 1 --colour red"))
            .unwrap_err()
            .contains("not accepted"));
        assert!(parse(&args("--port x"))
            .unwrap_err()
            .contains("whole number"));
    }
}
