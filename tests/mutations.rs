//! A bounded, deterministic mutation test of the glTF importer, run in CI: a few thousand broken
//! copies of the real assets and of the malformed files — flipped and inserted bytes,
//! truncations, huge and negative numbers, swapped indices, deleted keys, values of the wrong
//! type, deep nesting, long node chains, GLB chunks that claim more than the file holds. Every
//! load must return (an error, or an import), never panic, and stay within a memory bound: at
//! most 64 MiB plus 64 bytes per byte of input (the mutated file and the files in its folder),
//! measured by a counting allocator around each call. A time bound of 10 s per call catches hangs
//! only (this is not a timing test); the slowest call is printed.
//!
//! One test in its own binary, so that the allocator sees only this test's allocations.

use serde_json::{Value, json};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use wgpu_anim::offline::gltf_import;

/// The system allocator, counting the bytes allocated now and the most since the last reset.
struct Counting;
static NOW: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = NOW.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        NOW.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, layout, new_size) };
        if !q.is_null() {
            if new_size > layout.size() {
                let now = NOW.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size - layout.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                NOW.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        q
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// xorshift32: the same mutations on every run.
struct Rng(u32);
impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        self.next() as usize % n.max(1)
    }
}

/// One input: a file's bytes, the folder its external buffers are in, and their total size.
struct Seed {
    name: String,
    bytes: Vec<u8>,
    folder: PathBuf,
    external_bytes: usize,
}

fn seeds() -> Vec<Seed> {
    let assets = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets");
    let mut files = vec![
        assets.join("simple_skin/simple_skin.gltf"),
        assets.join("Fox/Fox.gltf"),
        assets.join("InterpolationTest/InterpolationTest.gltf"),
        assets.join("AnimatedMorphCube/AnimatedMorphCube.gltf"),
        assets.join("cmu/cmu_01_03.glb"),
    ];
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "gltf" || x == "glb") {
                out.push(p);
            }
        }
    }
    walk(&assets.join("malformed"), &mut files);
    files
        .into_iter()
        .map(|path| {
            let folder = path.parent().unwrap().to_path_buf();
            let external_bytes = std::fs::read_dir(&folder)
                .unwrap()
                .filter_map(|e| e.ok()?.metadata().ok())
                .map(|m| m.len() as usize)
                .sum();
            Seed {
                name: path.file_name().unwrap().to_string_lossy().into_owned(),
                bytes: std::fs::read(&path).unwrap(),
                folder,
                external_bytes,
            }
        })
        .collect()
}

/// Every JSON pointer of `v` to a number, an object or an array.
fn pointers(v: &Value, at: String, out: &mut Vec<(String, Value)>) {
    out.push((at.clone(), v.clone()));
    match v {
        Value::Object(map) => map.iter().for_each(|(k, c)| pointers(c, format!("{at}/{k}"), out)),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .for_each(|(i, c)| pointers(c, format!("{at}/{i}"), out)),
        _ => {}
    }
}

/// A broken copy of a glTF JSON document.
fn mutate_json(doc: &Value, rng: &mut Rng) -> Value {
    let mut doc = doc.clone();
    let mut all = Vec::new();
    pointers(&doc, String::new(), &mut all);
    let numbers: Vec<&String> = all.iter().filter(|(_, v)| v.is_number()).map(|(p, _)| p).collect();
    let (target, _) = &all[rng.below(all.len())];
    match rng.below(8) {
        // A number set to something huge, negative, zero or fractional.
        0 | 1 if !numbers.is_empty() => {
            let p = numbers[rng.below(numbers.len())];
            let values = [
                json!(4_294_967_295u64),
                json!(-1),
                json!(0),
                json!(1e300),
                json!(2_147_483_648u64),
                json!(0.5),
            ];
            *doc.pointer_mut(p).unwrap() = values[rng.below(values.len())].clone();
        }
        // Two numbers swapped (indices pointing at the wrong kind of thing).
        2 if numbers.len() > 1 => {
            let (a, b) = (numbers[rng.below(numbers.len())], numbers[rng.below(numbers.len())]);
            let (va, vb) = (doc.pointer(a).unwrap().clone(), doc.pointer(b).unwrap().clone());
            *doc.pointer_mut(a).unwrap() = vb;
            *doc.pointer_mut(b).unwrap() = va;
        }
        // A key deleted.
        3 => {
            if let Some((parent, key)) = target.rsplit_once('/')
                && let Some(Value::Object(map)) = doc.pointer_mut(parent)
            {
                map.remove(key);
            }
        }
        // A value of the wrong type.
        4 => {
            let values = [
                json!(null),
                json!("x"),
                json!([]),
                json!({}),
                json!(true),
                json!([[[1]]]),
            ];
            if let Some(v) = doc.pointer_mut(target) {
                *v = values[rng.below(values.len())].clone();
            }
        }
        // Deep nesting: a value wrapped in 200 arrays.
        5 => {
            if let Some(v) = doc.pointer_mut(target) {
                let mut nested = v.clone();
                for _ in 0..200 {
                    nested = json!([nested]);
                }
                *v = nested;
            }
        }
        // A chain of 20,000 nodes below the first.
        6 => {
            if let Some(Value::Array(nodes)) = doc.get_mut("nodes") {
                let first = nodes.len();
                for k in 0..20_000 {
                    nodes.push(json!({ "children": [first + k + 1], "translation": [0.0, 0.01, 0.0] }));
                }
                nodes.push(json!({}));
                if let Some(n) = nodes.first_mut().and_then(Value::as_object_mut) {
                    n.insert("children".into(), json!([first]));
                }
            }
        }
        // A count or length set past the data.
        _ => {
            let counts: Vec<&String> = numbers
                .iter()
                .copied()
                .filter(|p| p.ends_with("/count") || p.ends_with("/byteLength") || p.ends_with("/byteOffset"))
                .collect();
            if !counts.is_empty() {
                let p = counts[rng.below(counts.len())];
                let v = doc.pointer(p).unwrap().as_u64().unwrap_or(1);
                *doc.pointer_mut(p).unwrap() = json!(v.saturating_mul(1 + rng.below(1000) as u64) + 1);
            }
        }
    }
    doc
}

/// A broken copy of the raw bytes.
fn mutate_bytes(bytes: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut out = bytes.to_vec();
    match rng.below(4) {
        0 => {
            for _ in 0..1 + rng.below(8) {
                let i = rng.below(out.len());
                out[i] ^= (rng.next() >> 24) as u8 | 1;
            }
        }
        1 => out.truncate(rng.below(out.len())),
        2 => {
            let i = rng.below(out.len());
            let junk: Vec<u8> = (0..1 + rng.below(64)).map(|_| rng.next() as u8).collect();
            out.splice(i..i, junk);
        }
        // A GLB length field (total, or the first or second chunk's) set to a huge value.
        _ if out.starts_with(b"glTF") && out.len() >= 20 => {
            let json_len = u32::from_le_bytes(out[12..16].try_into().unwrap()) as usize;
            let fields = [8, 12, 20 + json_len];
            let at = fields[rng.below(fields.len())];
            if at + 4 <= out.len() {
                let huge = [u32::MAX, u32::MAX - 3, 0x8000_0000, 1 << 24];
                out[at..at + 4].copy_from_slice(&huge[rng.below(huge.len())].to_le_bytes());
            }
        }
        _ => out.truncate(out.len() / 2),
    }
    out
}

#[test]
fn thousands_of_broken_files_give_errors_within_bounds() {
    let seeds = seeds();
    let mut rng = Rng(0x9e37_79b9);
    let (mut calls, mut errors, mut panics) = (0, 0, Vec::new());
    let (mut accepted, mut beyond) = (0, Vec::new());
    let mut slowest = (Duration::ZERO, String::new());
    let mut most_memory = (0.0f64, String::new());
    for seed in &seeds {
        let doc: Option<Value> = serde_json::from_slice(&seed.bytes).ok();
        // Smaller files get more mutations; the 1.3 MB GLB fewer.
        let rounds = if seed.bytes.len() > 500_000 { 60 } else { 200 };
        for round in 0..rounds {
            let bytes = match &doc {
                Some(d) if round % 2 == 0 => serde_json::to_vec(&mutate_json(d, &mut rng)).unwrap(),
                _ => mutate_bytes(&seed.bytes, &mut rng),
            };
            let what = format!("{} mutation {round}", seed.name);
            let input = bytes.len() + seed.external_bytes;
            let bound = (64 << 20) + 64 * input;
            let base = NOW.load(Ordering::Relaxed);
            PEAK.store(base, Ordering::Relaxed);
            let start = Instant::now();
            let folder = seed.folder.clone();
            let result =
                std::panic::catch_unwind(move || gltf_import::load_slice(&bytes, "mutated.gltf", Some(&folder)));
            let took = start.elapsed();
            let used = PEAK.load(Ordering::Relaxed).saturating_sub(base);
            calls += 1;
            match result {
                Err(_) => panics.push(what.clone()),
                Ok(Err(e)) => {
                    errors += 1;
                    assert!(e.to_string().contains("mutated.gltf"), "{what}: {e}");
                }
                Ok(Ok(imported)) => {
                    // Accepted means finite: a file whose library builds yields poses and skinned
                    // vertices within reach, sampled at the start, middle and end of every clip.
                    if let Ok(library) = imported.build_library() {
                        accepted += 1;
                        if let Err(e) = imported.check_poses(&library, 3) {
                            beyond.push(format!("{what}: {e}"));
                        }
                    }
                }
            }
            assert!(used <= bound, "{what}: {used} bytes allocated, bound {bound}");
            assert!(took < Duration::from_secs(10), "{what}: took {took:?}");
            if took > slowest.0 {
                slowest = (took, what.clone());
            }
            let ratio = used as f64 / input as f64;
            if ratio > most_memory.0 {
                most_memory = (ratio, what);
            }
        }
    }
    println!(
        "{calls} mutated files from {} seeds: {errors} errors, {} imports ({accepted} with a library, every pose \
         checked), {} panics; slowest {:?} ({}); most memory {:.1} bytes per input byte ({})",
        seeds.len(),
        calls - errors - panics.len(),
        panics.len(),
        slowest.0,
        slowest.1,
        most_memory.0,
        most_memory.1
    );
    assert!(panics.is_empty(), "panicked: {panics:#?}");
    assert!(beyond.is_empty(), "accepted files with poses beyond reach: {beyond:#?}");
    assert!(
        accepted >= 50,
        "only {accepted} mutated files were accepted: the check saw too few"
    );
    assert!(calls >= 2000, "{calls} calls");
}
