//! Every file under `assets/malformed/` is rejected with an error naming the file — never a panic —
//! by the importer and by `wgpu-anim inspect`.

use std::path::{Path, PathBuf};
use std::process::Command;
use wgpu_anim::gltf_import;

fn malformed_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p
                .extension()
                .is_some_and(|x| x.eq_ignore_ascii_case("gltf") || x.eq_ignore_ascii_case("glb"))
            {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/malformed"),
        &mut out,
    );
    assert!(out.len() >= 10, "expected the malformed set, found {out:?}");
    out
}

#[test]
fn importer_rejects_every_malformed_file_without_panicking() {
    let mut problems = Vec::new();
    for path in malformed_files() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let p = path.clone();
        match std::panic::catch_unwind(move || gltf_import::load(&p)) {
            Err(_) => problems.push(format!("{}: panicked", path.display())),
            Ok(Ok(_)) => problems.push(format!("{}: was accepted", path.display())),
            Ok(Err(e)) => {
                let msg = e.to_string();
                eprintln!("{msg}");
                if !msg.contains(&name) {
                    problems.push(format!("{}: message does not name it: {msg}", path.display()));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn importer_rejects_truncated_and_garbled_copies_of_real_files() {
    // Cut a real GLB at many lengths and flip bytes: errors only, never a panic.
    let glb = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/cmu/cmu_01_03.glb");
    let bytes = std::fs::read(&glb).expect("read glb");
    let mut cuts: Vec<usize> = (0..64).map(|k| k * bytes.len() / 64).collect();
    cuts.extend([0, 1, 11, 12, 19, 20, 21, bytes.len() - 1]);
    for cut in cuts {
        let slice = bytes[..cut].to_vec();
        let r = std::panic::catch_unwind(move || gltf_import::load_slice(&slice, "cut.glb", None).map(|_| ()));
        assert!(matches!(r, Ok(Err(_))), "cut at {cut}: {r:?}");
    }
    let mut state = 0x1234_5678u32;
    for _ in 0..200 {
        let mut garbled = bytes.clone();
        for _ in 0..4 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let i = state as usize % garbled.len();
            garbled[i] ^= (state >> 24) as u8 | 1;
        }
        let r = std::panic::catch_unwind(move || gltf_import::load_slice(&garbled, "garbled.glb", None).map(|_| ()));
        assert!(r.is_ok(), "garbled file panicked");
    }
}

#[test]
fn inspect_fails_with_one_line_on_every_malformed_file() {
    for path in malformed_files() {
        let out = Command::new(env!("CARGO_BIN_EXE_wgpu-anim"))
            .arg("inspect")
            .arg(&path)
            .output()
            .expect("run wgpu-anim");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{}: {stderr}", path.display());
        assert_eq!(stderr.trim_end().lines().count(), 1, "{}: {stderr}", path.display());
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(stderr.contains(name.as_ref()), "{}: {stderr}", path.display());
    }
}
