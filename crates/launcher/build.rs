//! Builds the lock library (`locks/lablocks.c`, preloaded into real servers by
//! `launcher::locks`) and the small program its tests put under it
//! (`locks/lockdemo.c`), both into OUT_DIR.
//!
//! Why a C library built here rather than a Rust cdylib: a preloaded interposer of
//! `pthread_mutex_lock` runs inside any server, before and under its locks, where a Rust
//! runtime's own allocations and thread-locals would need the same care as C, and a cdylib
//! cannot be a dependency whose file a binary finds; the library's bytes are in the
//! binary instead (`include_bytes!`), written next to each server that loads it.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let compiler = cc::Build::new().get_compiler();
    build(
        &compiler,
        &["-O2", "-shared", "-fPIC", "-Wall", "-Wextra", "-Werror"],
        "locks/lablocks.c",
        &out.join("liblablocks.so"),
        &["-ldl", "-pthread"],
    );
    // -rdynamic: the demo's global locks are named by their symbols, as a shared
    // object's are (dladdr sees the dynamic symbol table only).
    build(
        &compiler,
        &["-O2", "-rdynamic", "-Wall", "-Werror"],
        "locks/lockdemo.c",
        &out.join("lockdemo"),
        &["-pthread"],
    );
    println!("cargo:rerun-if-changed=locks/lablocks.c");
    println!("cargo:rerun-if-changed=locks/lockdemo.c");
}

fn build(compiler: &cc::Tool, flags: &[&str], source: &str, output: &PathBuf, libs: &[&str]) {
    let status = Command::new(compiler.path())
        .args(flags)
        .arg("-o")
        .arg(output)
        .arg(source)
        .args(libs)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {:?}: {e}", compiler.path()));
    assert!(status.success(), "{source} did not compile ({status})");
}
