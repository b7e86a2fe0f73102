//! The tiny test server and its load as a program of their own ([`server::tiny`]), for
//! the server crate's tests; `lab tiny-server` is the same for scenario files.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(e) = server::tiny::parse(&args).and_then(|o| server::tiny::run(&o)) {
        eprintln!("lab-tiny-server: {e}");
        std::process::exit(2);
    }
}
