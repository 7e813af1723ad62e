//! Every file under `assets/malformed/` is rejected with an error naming the file — never a panic —
//! by the importer and by `wgpu-anim inspect`.

use std::path::{Path, PathBuf};
use std::process::Command;
use wgpu_anim::offline::gltf_import;

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

/// Fox.gltf with one index pointed past the end of its array, for every kind of index in glTF:
/// an error naming the file and the index, never a panic.
#[test]
fn every_kind_of_index_out_of_range_is_an_error_naming_it() {
    use serde_json::{Value, json};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/Fox");
    let fox: Value = serde_json::from_slice(&std::fs::read(dir.join("Fox.gltf")).unwrap()).unwrap();
    let child = fox["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n.get("children").is_some())
        .unwrap();
    let mesh_node = fox["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .position(|n| n.get("mesh").is_some())
        .unwrap();
    // (where, what to set there, what the message must name)
    let cases: Vec<(String, Value, &str)> = vec![
        ("/scene".into(), json!(5), "scene"),
        ("/scenes/0/nodes/0".into(), json!(99), "nodes"),
        (format!("/nodes/{child}/children/0"), json!(99), "children"),
        (format!("/nodes/{mesh_node}/mesh"), json!(9), "mesh"),
        (format!("/nodes/{mesh_node}/skin"), json!(9), "skin"),
        (format!("/nodes/{mesh_node}/camera"), json!(0), "camera"),
        ("/skins/0/joints/0".into(), json!(99), "joints"),
        ("/skins/0/skeleton".into(), json!(99), "skeleton"),
        ("/skins/0/inverseBindMatrices".into(), json!(999), "inverseBindMatrices"),
        (
            "/meshes/0/primitives/0/attributes/POSITION".into(),
            json!(999),
            "POSITION",
        ),
        ("/meshes/0/primitives/0/indices".into(), json!(999), "indices"),
        ("/meshes/0/primitives/0/material".into(), json!(9), "material"),
        (
            "/meshes/0/primitives/0/targets".into(),
            json!([{ "POSITION": 999 }]),
            "targets",
        ),
        ("/accessors/0/bufferView".into(), json!(99), "bufferView"),
        (
            "/accessors/0/sparse".into(),
            json!({ "count": 1, "indices": { "bufferView": 99, "componentType": 5123 }, "values": { "bufferView": 0 } }),
            "sparse",
        ),
        (
            "/accessors/0/sparse".into(),
            json!({ "count": 1, "indices": { "bufferView": 0, "componentType": 5123 }, "values": { "bufferView": 99 } }),
            "sparse",
        ),
        ("/bufferViews/0/buffer".into(), json!(9), "buffer"),
        ("/animations/0/channels/0/sampler".into(), json!(999), "sampler"),
        ("/animations/0/channels/0/target/node".into(), json!(99), "node"),
        ("/animations/0/samplers/0/input".into(), json!(999), "input"),
        ("/animations/0/samplers/0/output".into(), json!(999), "output"),
        (
            "/images/0".into(),
            json!({ "bufferView": 99, "mimeType": "image/png" }),
            "bufferView",
        ),
        ("/textures/0/source".into(), json!(9), "source"),
        ("/textures/0/sampler".into(), json!(9), "sampler"),
        (
            "/materials/0/pbrMetallicRoughness/baseColorTexture/index".into(),
            json!(9),
            "index",
        ),
    ];
    let mut problems = Vec::new();
    for (k, (pointer, value, names)) in cases.into_iter().enumerate() {
        let mut doc = fox.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        match doc
            .pointer_mut(parent)
            .unwrap_or_else(|| panic!("{parent} not in Fox.gltf"))
        {
            Value::Object(map) => {
                map.insert(key.to_owned(), value);
            }
            Value::Array(items) => items[key.parse::<usize>().unwrap()] = value,
            other => panic!("{parent} is {other}"),
        }
        let file = format!("fox_index_case_{k}.gltf");
        let bytes = serde_json::to_vec(&doc).unwrap();
        match std::panic::catch_unwind(|| gltf_import::load_slice(&bytes, &file, Some(&dir))) {
            Err(_) => problems.push(format!("{pointer}: panicked")),
            Ok(Ok(_)) => problems.push(format!("{pointer}: accepted")),
            Ok(Err(e)) => {
                let msg = e.to_string();
                eprintln!("{pointer}: {msg}");
                if !msg.contains(&file) || !msg.contains(names) {
                    problems.push(format!(
                        "{pointer}: the message names neither the file nor {names}: {msg}"
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every input a fuzz run of the importer found crashing (the files of `tests/fuzz_regressions/`,
/// as the bytes the importer was given: the `glb` target's inputs wrapped in their GLB
/// container): an error or an import, never a panic. (The `builder` target's crashes, in its
/// subfolder, are its own inputs: `cargo fuzz run builder tests/fuzz_regressions/builder`
/// replays them, and `tests/layers.rs` tests what they found.)
#[test]
fn fuzz_regressions_do_not_panic() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_regressions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for path in files {
        let bytes = std::fs::read(&path).unwrap();
        let r = std::panic::catch_unwind(|| gltf_import::load_slice(&bytes, "fuzz.gltf", None).map(|_| ()));
        assert!(r.is_ok(), "{}: panicked", path.display());
    }
}

/// The GLB container the `glb` fuzz target wraps its input in (fuzz/fuzz_targets/glb.rs): the
/// first byte splits the rest into a JSON chunk and a binary chunk.
fn fuzz_glb(bytes: &[u8]) -> Vec<u8> {
    let Some((&split, rest)) = bytes.split_first() else {
        return Vec::new();
    };
    let at = (usize::from(split) * rest.len() / 255).min(rest.len());
    let (json, bin) = rest.split_at(at);
    let pad = |chunk: &[u8], fill: u8| {
        let mut v = chunk.to_vec();
        v.resize(chunk.len().next_multiple_of(4), fill);
        v
    };
    let (json, bin) = (pad(json, b' '), pad(bin, 0));
    let total = 12 + 8 + json.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
    let mut glb = Vec::with_capacity(total);
    for part in [b"glTF".as_slice(), &2u32.to_le_bytes(), &(total as u32).to_le_bytes()] {
        glb.extend_from_slice(part);
    }
    glb.extend_from_slice(&(json.len() as u32).to_le_bytes());
    glb.extend_from_slice(b"JSON");
    glb.extend_from_slice(&json);
    if !bin.is_empty() {
        glb.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        glb.extend_from_slice(b"BIN\0");
        glb.extend_from_slice(&bin);
    }
    glb
}

/// The importer fuzz targets' minimized corpora (`tests/fuzz_corpus/gltf` and `glb`: every input
/// an hour of fuzzing kept for new coverage, 9,300 files): each imports or is an error, never a
/// panic, as the fuzzer saw; and every one whose library builds gives poses within reach at
/// three times of every clip (`Imported::check_poses`), as the fuzz targets assert.
#[test]
fn the_fuzz_corpora_import_without_panics() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz_corpus");
    for (target, wrap) in [("gltf", false), ("glb", true)] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(target))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(files.len() > 1000, "{target}: {} inputs", files.len());
        let (mut ok, mut refused) = (0, 0);
        for path in files {
            let bytes = std::fs::read(&path).unwrap();
            let bytes = if wrap { fuzz_glb(&bytes) } else { bytes };
            let accepted = || {
                let Ok(imported) = gltf_import::load_slice(&bytes, "fuzz.gltf", None) else {
                    return Ok(false);
                };
                match imported.build_library() {
                    Ok(library) => imported.check_poses(&library, 3).map(|()| true),
                    Err(_) => Ok(false),
                }
            };
            match std::panic::catch_unwind(accepted) {
                Ok(Ok(true)) => ok += 1,
                Ok(Ok(false)) => refused += 1,
                Ok(Err(e)) => panic!("{}: accepted, with a pose beyond reach: {e}", path.display()),
                Err(_) => panic!("{}: panicked", path.display()),
            }
        }
        assert!(ok > 0 && refused > 0, "{target}: {ok} imported, {refused} refused");
    }
}
