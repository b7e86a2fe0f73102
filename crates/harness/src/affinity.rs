//! CPU affinity: which CPUs this process may run on, limiting it to the first `cores` of
//! them (what `taskset` does), and the kernel's CPU-list notation (`0-3,5`).
//!
//! The mask is set on the calling thread before any worker starts; threads inherit it.
//! This module does not choose how many cores a cell gets: `lab` does.

/// Parses a CPU list such as `0-3,5,8-9` (the format of `/sys/devices/system/cpu/online`
/// and of `taskset -c`) into sorted, de-duplicated CPU numbers.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty CPU list: expected e.g. 0-3,5".into());
    }
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let bad = || format!("bad CPU list {text:?} at {part:?}: expected e.g. 0-3,5");
        let number = |s: &str| s.trim().parse::<usize>().map_err(|_| bad());
        match part.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi) = (number(lo)?, number(hi)?);
                if lo > hi {
                    return Err(bad());
                }
                cpus.extend(lo..=hi);
            }
            None => cpus.push(number(part)?),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Writes CPU numbers in the compact list notation, e.g. `[0,1,2,5]` as `0-2,5`.
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// The CPUs the calling thread may run on now.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: sched_getaffinity writes at most size_of::<cpu_set_t>() bytes into `set`.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            return (0..n).collect();
        }
        (0..libc::CPU_SETSIZE as usize)
            .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
            .collect()
    }
}

/// Restricts the calling thread (and every thread it starts afterwards) to the first
/// `cores` of the CPUs it may use now. Returns the CPUs in the new mask.
pub fn limit_to_cores(cores: usize) -> Result<Vec<usize>, String> {
    let allowed = allowed_cpus();
    if cores == 0 || cores > allowed.len() {
        return Err(format!(
            "cores={cores}: this machine lets us use {} CPU(s) ({}); accepted 1..={}",
            allowed.len(),
            format_cpu_list(&allowed),
            allowed.len()
        ));
    }
    let chosen = allowed[..cores].to_vec();
    // SAFETY: the set is fully initialised by zeroed + CPU_SET before the call.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &cpu in &chosen {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        return Err(format!(
            "could not set CPU affinity to {}: {}",
            format_cpu_list(&chosen),
            std::io::Error::last_os_error()
        ));
    }
    Ok(chosen)
}

/// Pins the calling thread to one CPU (a thread of its own: threads it starts afterwards
/// inherit the mask).
pub fn pin_to(cpu: usize) -> Result<(), String> {
    // SAFETY: the set is fully initialised by zeroed + CPU_SET before the call.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        return Err(format!(
            "could not pin to CPU {cpu}: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_kernel_cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,5").unwrap(), vec![0, 1, 2, 3, 5]);
        assert_eq!(parse_cpu_list("7").unwrap(), vec![7]);
        assert_eq!(parse_cpu_list(" 2,0-1,1 \n").unwrap(), vec![0, 1, 2]);
        for bad in ["", "a", "3-1", "1,,2", "1-", "-1"] {
            assert!(parse_cpu_list(bad).is_err(), "{bad:?} should be refused");
        }
    }

    #[test]
    fn formats_compactly_and_round_trips() {
        assert_eq!(format_cpu_list(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(format_cpu_list(&[3]), "3");
        assert_eq!(format_cpu_list(&[]), "");
        let cpus = vec![0, 2, 3, 4, 9];
        assert_eq!(parse_cpu_list(&format_cpu_list(&cpus)).unwrap(), cpus);
    }

    #[test]
    fn limiting_to_one_core_applies_in_a_fresh_thread() {
        // Run in a thread of its own so the test runner's threads keep their mask.
        std::thread::spawn(|| {
            let before = allowed_cpus();
            assert!(!before.is_empty());
            let chosen = limit_to_cores(1).unwrap();
            assert_eq!(chosen, vec![before[0]]);
            assert_eq!(allowed_cpus(), chosen);
            assert!(limit_to_cores(0).is_err());
            assert!(limit_to_cores(before.len() + 1)
                .unwrap_err()
                .contains("accepted 1..="));
        })
        .join()
        .unwrap();
    }
}
