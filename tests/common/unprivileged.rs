//! Running a test's permission checks as a user permissions apply to.
//!
//! Tests run as root here, and root reads a file of mode 000. A test whose
//! checks need permissions to bite calls [`checks_run_here`] first: as an
//! unprivileged user it runs the checks itself; as root it runs the same
//! test again in a child process as `nobody` (`setpriv --reuid=nobody
//! --regid=nogroup --clear-groups`), fails if the child fails or ran no
//! test, and prints why when no child can be started.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

/// Set in the child, so a child that is still privileged fails instead of
/// starting another child.
const CHILD_ENV: &str = "AGENTLOG_TEST_UNPRIVILEGED_CHILD";

/// Whether this process reads files whatever their permissions (root, or
/// `CAP_DAC_OVERRIDE`): then `chmod 000` does not stop a read.
pub fn reads_anything() -> bool {
    let t = tempfile::tempdir().expect("a temporary directory");
    let p = t.path().join("probe-permissions");
    fs::write(&p, b"x").expect("write the probe");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o000)).expect("chmod the probe");
    fs::read(&p).is_ok()
}

/// Whether the calling test, the function `name` in the module `module`
/// (the caller's `module_path!()`), runs its permission checks in this
/// process. `false` when they ran in an unprivileged child (which passed)
/// or cannot run at all (a note on standard error says why): the caller
/// then returns.
pub fn checks_run_here(module: &str, name: &str) -> bool {
    let test = super::test_name(module, name);
    if !reads_anything() {
        return true;
    }
    assert!(
        std::env::var_os(CHILD_ENV).is_none(),
        "{test}: the child started as `nobody` still reads a file of mode 000"
    );
    let exe = std::env::current_exe().expect("the test binary's path");
    // The binary must be reachable by `nobody` (every directory above it
    // searchable), else the checks cannot run as another user.
    let probe = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        .arg(&exe)
        .arg("--list")
        .stdin(Stdio::null())
        .output();
    match probe {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            crate::common::skip_unless_ci(
                &test,
                &format!(
                    "running as root, and `setpriv` cannot run the test binary as `nobody` \
                     ({}): the permission checks",
                    String::from_utf8_lossy(&o.stderr).trim()
                ),
            );
            return false;
        }
        Err(e) => {
            crate::common::skip_unless_ci(
                &test,
                &format!(
                    "running as root, and `setpriv` cannot be started ({e}): the permission checks"
                ),
            );
            return false;
        }
    }
    let out = Command::new("setpriv")
        .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
        .arg(&exe)
        .args(["--exact", &test, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        // Temporary files where `nobody` may write them.
        .env("TMPDIR", std::env::temp_dir())
        .current_dir(Path::new("/"))
        .stdin(Stdio::null())
        .output()
        .expect("run the test as nobody");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{test} as nobody failed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("test result: ok. 1 passed"),
        "{test} as nobody ran no test:\n{stdout}\n{stderr}"
    );
    eprintln!("{test}: the permission checks ran as nobody and passed");
    false
}
