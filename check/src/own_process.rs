//! Under loom, each model runs in a process of its own: the test re-runs
//! its own binary with `--exact <its name>`, relays what that child
//! printed, and fails if the child failed.
//!
//! Why: libtest runs two tests at once as two threads of one process, and
//! loom maps and unmaps a stack (36 KiB) for every thread of every
//! execution. In one address space, every unmap of one model sends an
//! interrupt to the core running the other (a TLB shoot-down) and takes
//! the lock both need for their page faults: a third of the main job's
//! time was the kernel's (HISTORY.md, 2026-11-28, has the measurement).
//! Nothing else changes: the child runs the same test, with the same
//! environment, prints the same result line and appends it to the same
//! `MODELSYNC_REPORT`.
//!
//! `MODELSYNC_LOOM_PROCESS=shared` runs models in the test's own thread
//! (for a debugger, or `LOOM_LOG`); the child sets
//! `MODELSYNC_LOOM_PROCESS=child` and runs the model itself.

use std::cell::RefCell;
use std::io::Write;
use std::process::Command;

thread_local! {
    /// The test this thread has already handed to a child: a test that
    /// runs more than one model hands itself over once, and its later
    /// models ran in that child.
    static HANDED_OVER: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Whether the model `name` runs in this process. Under loom, outside a
/// child: runs the test in a child process (once per test), relays its
/// output, panics if it failed, and answers false.
pub fn runs_here(name: &str) -> bool {
    if !cfg!(loom) {
        return true;
    }
    match std::env::var("MODELSYNC_LOOM_PROCESS").as_deref() {
        Ok("shared") => return true,
        Ok("child") => {
            watch_parent();
            return true;
        }
        Err(_) => {}
        Ok(other) => panic!("MODELSYNC_LOOM_PROCESS={other:?} is neither `shared` nor `child`"),
    }
    let already = HANDED_OVER.with(|h| h.borrow().as_deref() == Some(name));
    if already {
        return false;
    }
    HANDED_OVER.with(|h| *h.borrow_mut() = Some(name.to_string()));
    let exe = std::env::current_exe().expect("the test binary's path");
    let out = Command::new(exe)
        // `--include-ignored`: a test run only when asked (`--ignored`)
        // was asked for, since it is running; its child must run it too.
        .args([
            "--exact",
            name,
            "--include-ignored",
            "--test-threads=1",
            "--nocapture",
        ])
        .env("MODELSYNC_LOOM_PROCESS", "child")
        .output()
        .unwrap_or_else(|e| panic!("{name}: cannot start its own process: {e}"));
    // Result lines go to stderr uncaptured, as in one process; the rest
    // (loom's own output, a panic's message) as the test's output.
    let _ = std::io::stderr().write_all(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    let ran_one = stdout.contains("1 passed");
    assert!(
        out.status.success() && ran_one,
        "{name}: failed in its own process ({}; its output is above)",
        out.status
    );
    false
}

/// In a child: exits when the test that started it is gone (a killed CI
/// job or a mutation run's timeout must not leave a model running).
fn watch_parent() {
    use std::sync::Once;
    static WATCH: Once = Once::new();
    WATCH.call_once(|| {
        let parent = std::os::unix::process::parent_id();
        std::thread::spawn(move || loop {
            std::thread::sleep(std::time::Duration::from_millis(500));
            if std::os::unix::process::parent_id() != parent {
                std::process::exit(101);
            }
        });
    });
}
