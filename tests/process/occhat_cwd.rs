//! A store given a relative root names its files relative to the working
//! directory. Here because it changes the working directory.

use std::path::PathBuf;

use agentlog::occhat::ChatSession;

use crate::common::occhat::store_at;
use crate::common::occhat_writes::T0;

#[test]
fn a_relative_root_gives_relative_paths() {
    let _g = crate::process_lock();
    let tmp = tempfile::tempdir().unwrap();
    let old = std::env::current_dir().unwrap();
    std::env::set_current_dir(tmp.path()).unwrap();
    let (store, _) = store_at("rel/sessions", T0);
    let p = store
        .save_session_metadata(&mut ChatSession::new("s", "deepseek-chat"))
        .unwrap();
    let list = store.list_sessions();
    let paths: Vec<PathBuf> = list.sessions.iter().map(|s| s.filepath.clone()).collect();
    std::env::set_current_dir(old).unwrap();
    assert_eq!(
        p,
        PathBuf::from("rel/sessions/s/s_2025-04-07--08-55-43_meta.json")
    );
    assert_eq!(paths, [p]);
}
