//! glTF 2.0's morph-target rules, each in a file made for it (`tests/fixtures/morph/rules.mjs`),
//! checked against where three.js puts every vertex (`tests/fixtures/morph/rules.json`): the
//! importer and the f64 reference, the CPU mirror, the GPU (staged and fused) and
//! `wgpu-anim sample` on all three.
//!
//! The rules: weights from the channel, else the node's `weights`, else the mesh's; a weights
//! sampler clamped to its own first and last keys (which lie inside the joints' keys); STEP,
//! LINEAR and CUBICSPLINE weights (tangents scaled by the key interval, the first in-tangent and
//! the last out-tangent ignored); weights stored as normalized i8, u8, i16 and u16; weights below
//! 0 and above 1, not clamped; a target without POSITION moves nothing; sparse accessors with u8,
//! u16 and u32 indices, on zeros and on a buffer view (a strided one too); attributes interleaved
//! in one buffer view; skin joints listed children first; a mesh without a skin under a scaled,
//! turned parent, used by two nodes.

mod common;

use glam::DVec3;
use std::path::{Path, PathBuf};
use wgpu_anim::gpu::GpuMorphTargets;
use wgpu_anim::offline::gltf_import::{self, Imported};
use wgpu_anim::shaders::Resource;
use wgpu_anim::testing::skin_on_gpu_morphed;
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, LoopMode, cpu, reference};

const FILES: [&str; 3] = ["rules_tube.glb", "rules_tube_node_weights.glb", "rules_sphere.glb"];

/// The f32 paths (CPU mirror, GPU) against three.js: of the mesh's extent.
const F32_TOLERANCE: f64 = 2e-6;
/// The f64 reference against three.js (which reads the file's f32 data and computes in f64).
const F64_TOLERANCE: f64 = 2e-7;
/// Weights, absolute.
const WEIGHT_TOLERANCE: f64 = 1e-5;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/morph")
}

/// One of three.js's answers: an animation at a time, its weights and every vertex.
struct Case {
    animation: String,
    time: f64,
    weights: Vec<f64>,
    positions: Vec<DVec3>,
}

fn cases(file: &str) -> Vec<Case> {
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("rules.json")).unwrap()).unwrap();
    let floats =
        |v: &serde_json::Value| -> Vec<f64> { v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect() };
    json["files"][file]["cases"]
        .as_array()
        .unwrap_or_else(|| panic!("rules.json has no cases for {file}"))
        .iter()
        .map(|c| Case {
            animation: c["animation"].as_str().unwrap().to_owned(),
            time: c["time"].as_f64().unwrap(),
            weights: floats(&c["weights"]),
            positions: c["positions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| DVec3::from_slice(&floats(p)))
                .collect(),
        })
        .collect()
}

fn load(file: &str) -> Imported {
    gltf_import::load(&dir().join(file)).unwrap_or_else(|e| panic!("{e}"))
}

/// The skeleton whose pose lists the mesh's vertices, and the clip of `animation`.
fn clip_of(imp: &Imported, animation: &str) -> (usize, usize) {
    let s = imp.primary_skeleton().unwrap();
    let a = imp.animations.iter().position(|a| a.name == animation).unwrap();
    (s, imp.skeletons[s].clip_of_animation(a).unwrap())
}

/// The largest coordinate difference between two lists of points.
fn worst(got: impl IntoIterator<Item = DVec3>, want: &[DVec3]) -> f64 {
    let mut n = 0;
    let w = got
        .into_iter()
        .zip(want)
        .inspect(|_| n += 1)
        .map(|(g, w)| (g - *w).abs().max_element())
        .fold(0.0, f64::max);
    assert_eq!(n, want.len(), "as many points as three.js's");
    w
}

fn worst_weight(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len(), "one weight per target");
    got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(0.0, f64::max)
}

fn extent(imp: &Imported) -> f64 {
    let s = imp.primary_skeleton().unwrap();
    let (lo, hi) = imp.pose_mesh(s).unwrap().mesh.bounds();
    f64::from((hi - lo).max_element())
}

fn to_f64(w: &[f32]) -> Vec<f64> {
    w.iter().map(|&w| f64::from(w)).collect()
}

/// What the importer reads of each rule: the targets' names and deltas (a NORMAL-only target
/// with no position delta, sparse targets with the vertices they name), the default weights
/// (the node's over the mesh's), the normalized integer weights decoded, the skin's joints
/// listed children first made a parent-first skeleton.
#[test]
fn the_importer_reads_each_rule_as_gltf_says() {
    let tube = load("rules_tube.glb");
    let m = tube.pose_mesh(tube.primary_skeleton().unwrap()).unwrap();
    let t = &m.mesh.morph_targets;
    let names: Vec<&str> = t.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        ["bulge", "dent", "tip", "lean", "tilt", "twist", "flare", "knot"]
    );
    assert_eq!(t.default_weights, [0.3, -0.5, 1.2, 0.7, 1.0, 0.4, -0.25, 0.8]);
    let n = m.mesh.positions.len();
    assert_eq!(n, 204);
    // Sparse on zeros: only the vertices named (u8: every fifth below 256 from 2; u16: the top
    // three rings of 12).
    assert_eq!(t.targets[1].deltas.len(), (0..n).filter(|v| v % 5 == 2).count());
    assert!(t.targets[1].deltas.iter().all(|d| d.vertex % 5 == 2));
    assert_eq!(t.targets[2].deltas.len(), 36);
    // NORMAL only: normals move, positions do not.
    assert!(!t.targets[4].deltas.is_empty());
    assert!(t.targets[4].deltas.iter().all(|d| d.position == glam::Vec3::ZERO));
    // Sparse over a strided view: the view's values, (0, y, 0), where no index replaces them
    // (read as if packed tightly, vertex 1 would be (0, 0, z)).
    let knot = &t.targets[7].deltas;
    let unreplaced = knot.iter().find(|d| d.vertex == 1).unwrap().position;
    assert!(
        unreplaced.x == 0.0 && unreplaced.z == 0.0 && unreplaced.y > 0.0,
        "{unreplaced:?}"
    );
    assert_eq!(knot.iter().find(|d| d.vertex == 20).unwrap().position.x, 0.1);
    // The skeleton is parent-first whatever the skin's order: j3, j2, j1, j0 in the skin.
    let sk = &tube.skeletons[0];
    let parents = sk.skeleton.parents();
    assert!((0..parents.len()).all(|j| parents[j].is_none_or(|p| (p as usize) < j)));
    let skin_names: Vec<&str> = sk
        .skin_joints
        .iter()
        .map(|&j| sk.skeleton.joint_names()[j].as_str())
        .collect();
    assert_eq!(skin_names, ["j3", "j2", "j1", "j0"]);
    // Normalized signed weights decode as max(c / 127, -1) and max(c / 32767, -1).
    let (s, c) = clip_of(&tube, "i8");
    let track = &tube.skeletons[s].clips[c].clip.morph_weights[1];
    assert_eq!(track.values[0], (-0.18f64 * 127.0).round() as f32 / 127.0);
    let (s, c) = clip_of(&tube, "i16");
    assert!(tube.skeletons[s].clips[c].clip.morph_weights[1].values[0] < 0.0);

    // No such skeleton or clip: no weights, no panic.
    assert!(tube.morph_weights_at(7, 0, 0.5).is_empty() && tube.morph_weights_at(0, 99, 0.5).is_empty());

    // The node's weights override the mesh's.
    let node = load("rules_tube_node_weights.glb");
    let m = node.pose_mesh(node.primary_skeleton().unwrap()).unwrap();
    assert_eq!(
        m.mesh.morph_targets.default_weights,
        [-0.2, 0.9, 0.0, 1.3, 0.5, -0.7, 0.6, 0.1]
    );

    // The sphere: no skin; the first node that uses the mesh has weights of its own.
    let sphere = load("rules_sphere.glb");
    let s = sphere.primary_skeleton().unwrap();
    assert!(sphere.skeletons[s].skin.is_none());
    let m = sphere.pose_mesh(s).unwrap();
    assert_eq!(m.mesh.morph_targets.default_weights, [0.1, 0.6, -0.4, 0.3]);
    let copy = sphere.meshes.iter().find(|x| x.node != m.node).unwrap();
    assert_eq!(copy.mesh.morph_targets.default_weights, [0.5, -0.2, 0.9, 1.0]);
}

/// Every case of every file on the f64 reference (weights and vertices through
/// `Imported::gltf_pose`) and on the CPU mirror (`cpu::morph_weights_at`, `cpu::skin_morphed`).
#[test]
fn the_f64_reference_and_the_cpu_mirror_match_three_js() {
    let mut checked = 0;
    for file in FILES {
        let imp = load(file);
        let extent = extent(&imp);
        let lib = imp.build_library().unwrap();
        let (mut worst_f64, mut worst_f32) = (0.0f64, 0.0f64);
        for case in cases(file) {
            let what = format!("{file}, '{}' at {} s", case.animation, case.time);
            let (s, c) = clip_of(&imp, &case.animation);
            let sk = &imp.skeletons[s];
            let m = imp.pose_mesh(s).unwrap();
            // f64.
            let weights = imp.morph_weights_at(s, c, case.time);
            assert!(
                worst_weight(&weights, &case.weights) <= WEIGHT_TOLERANCE,
                "{what}: {weights:?}"
            );
            let local = reference::sample(&sk.skeleton, &sk.clips[c].clip, case.time);
            let model = reference::local_to_model(&sk.skeleton, &local);
            let palette = reference::palette(&sk.skeleton, &model);
            let pose = imp.gltf_pose(s, &model, &palette, &weights).unwrap();
            let e = worst(pose.vertices.iter().copied(), &case.positions) / extent;
            assert!(e <= F64_TOLERANCE, "{what}: f64 reference off by {e:.1e} of the extent");
            worst_f64 = worst_f64.max(e);
            // The CPU mirror.
            let clip = lib.clips[s][c];
            let set = m.mesh.morph_targets.build(m.mesh.positions.len()).unwrap();
            let w = cpu::morph_weights_at(&lib.library, clip, case.time as f32, &set.default_weights()).unwrap();
            assert!(
                worst_weight(&to_f64(&w), &case.weights) <= WEIGHT_TOLERANCE,
                "{what}: {w:?}"
            );
            let pose = cpu::pose_at(&lib.library, clip, case.time as f32).unwrap();
            let skinned =
                cpu::skin_morphed(&pose.palette, &[], 0, 0.0, set.words(), &w, &m.mesh.gpu_vertices()).unwrap();
            let e = worst(
                skinned.iter().map(|p| p.position.truncate().as_dvec3()),
                &case.positions,
            ) / extent;
            assert!(e <= F32_TOLERANCE, "{what}: CPU mirror off by {e:.1e} of the extent");
            worst_f32 = worst_f32.max(e);
            checked += 1;
        }
        eprintln!("{file}: f64 reference within {worst_f64:.1e}, CPU mirror within {worst_f32:.1e} of the extent");
    }
    assert_eq!(checked, 48 + 12 + 15);
}

/// Every case of every file on the GPU, one instance per case, staged and fused: the weights the
/// sample pass blends (read back) and the vertices the skinning module morphs and skins (read
/// back) against three.js and the CPU mirror; and the comparison fails on a wrong buffer.
#[test]
fn the_gpu_staged_and_fused_matches_three_js_and_the_mirror() {
    let (device, queue) = common::device();
    for file in FILES {
        let imp = load(file);
        let extent = extent(&imp);
        let cases = cases(file);
        let lib = imp.build_library().unwrap();
        let s = imp.primary_skeleton().unwrap();
        let m = imp.pose_mesh(s).unwrap();
        let set = m.mesh.morph_targets.build(m.mesh.positions.len()).unwrap();
        let room = set.target_count();
        let gpu_targets = GpuMorphTargets::new(&device, &set).unwrap();
        let vertices = m.mesh.gpu_vertices();
        let desc = AnimatorDesc::default()
            .with_max_instances(cases.len() as u32)
            .with_morph_weights(room as u32);
        let mut animator = Animator::new(&device, &lib.library, &desc).unwrap();
        let mut mirror = Vec::new();
        for (i, case) in cases.iter().enumerate() {
            let (s, c) = clip_of(&imp, &case.animation);
            let clip = lib.clips[s][c];
            animator
                .controller_mut()
                .add_instance(
                    &InstanceDesc::new(clip)
                        .with_time(case.time as f32)
                        .with_rate(0.0)
                        .with_loop_mode(LoopMode::Once),
                )
                .unwrap();
            animator
                .controller_mut()
                .set_morph_weights(i, &set.default_weights())
                .unwrap();
            let w = cpu::morph_weights_at(&lib.library, clip, case.time as f32, &set.default_weights()).unwrap();
            let pose = cpu::pose_at(&lib.library, clip, case.time as f32).unwrap();
            let skinned = cpu::skin_morphed(&pose.palette, &[], 0, 0.0, set.words(), &w, &vertices).unwrap();
            mirror.push((w, skinned));
        }
        for fused in [false, true] {
            animator.set_fused(fused).unwrap();
            animator.prepare(&queue, 0.0);
            let mut encoder = device.create_command_encoder(&Default::default());
            animator.encode(&mut encoder).unwrap();
            queue.submit([encoder.finish()]);
            // The weights in use come first in the page's morph-weight buffer.
            let weights: Vec<f32> = animator
                .read_page_buffer(
                    &device,
                    &queue,
                    0,
                    Resource::MorphWeights,
                    0,
                    (cases.len() * room) as u64,
                )
                .unwrap();
            let mut worst_three = 0.0f64;
            for (i, case) in cases.iter().enumerate() {
                let what = format!("{file}, fused {fused}, '{}' at {} s", case.animation, case.time);
                let w = to_f64(&weights[i * room..(i + 1) * room]);
                assert!(
                    worst_weight(&w, &case.weights) <= WEIGHT_TOLERANCE,
                    "{what}: GPU weights {w:?}"
                );
                assert!(
                    worst_weight(&w, &to_f64(&mirror[i].0)) <= 1e-6,
                    "{what}: GPU weights {w:?}"
                );
                let gpu = skin_on_gpu_morphed(&device, &queue, &animator, i, &gpu_targets, &vertices).unwrap();
                let points: Vec<DVec3> = gpu.iter().map(|p| p.position.truncate().as_dvec3()).collect();
                let e = worst(points.iter().copied(), &case.positions) / extent;
                assert!(e <= F32_TOLERANCE, "{what}: GPU off three.js by {e:.1e} of the extent");
                worst_three = worst_three.max(e);
                let mirrored: Vec<DVec3> = mirror[i].1.iter().map(|p| p.position.truncate().as_dvec3()).collect();
                let e = worst(points.iter().copied(), &mirrored) / extent;
                assert!(
                    e <= F32_TOLERANCE,
                    "{what}: GPU off the mirror by {e:.1e} of the extent"
                );
                // The comparison fails on a wrong buffer: this instance's vertices against the
                // answer of a case whose weights differ.
                if let Some(other) = cases.iter().find(|o| worst_weight(&o.weights, &case.weights) > 0.1) {
                    let e = worst(points.iter().copied(), &other.positions) / extent;
                    assert!(e > 100.0 * F32_TOLERANCE, "{what}: a wrong answer passes ({e:.1e})");
                }
            }
            eprintln!("{file}, fused {fused}: GPU within {worst_three:.1e} of the extent of three.js");
        }
    }
}

/// `wgpu-anim sample --json` on the GPU, the CPU mirror and the f64 reference: the morph weights
/// and the vertices it prints, for a skinned file and for one without a skin (placed by its
/// node's world matrix), against three.js; the glTF sample AnimatedMorphCube too.
#[test]
fn sample_prints_morphed_vertices_and_weights() {
    let run = |file: &Path, animation: &str, time: f64, path: &str| -> serde_json::Value {
        let mut args = vec![
            "sample".to_owned(),
            file.display().to_string(),
            "--clip".to_owned(),
            animation.to_owned(),
            "--time".to_owned(),
            time.to_string(),
            "--json".to_owned(),
        ];
        if !path.is_empty() {
            args.push(path.to_owned());
        }
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_wgpu-anim"))
            .args(&args)
            .output()
            .unwrap();
        assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let points = |v: &serde_json::Value| -> Vec<DVec3> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|p| DVec3::new(p[0].as_f64().unwrap(), p[1].as_f64().unwrap(), p[2].as_f64().unwrap()))
            .collect()
    };
    let floats =
        |v: &serde_json::Value| -> Vec<f64> { v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect() };
    let mut checks: Vec<(PathBuf, f64, Case)> = Vec::new();
    for (file, animation, time) in [("rules_tube.glb", "cubic", 0.8), ("rules_sphere.glb", "i16", 1.1)] {
        let case = cases(file)
            .into_iter()
            .find(|c| c.animation == animation && c.time == time)
            .unwrap();
        checks.push((dir().join(file), extent(&load(file)), case));
    }
    let cube = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/AnimatedMorphCube/AnimatedMorphCube.gltf");
    let fixture: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir().join("morph_cube.json")).unwrap()).unwrap();
    let c = &fixture["cases"][1];
    checks.push((
        cube.clone(),
        extent(&load_path(&cube)),
        Case {
            animation: c["animation"].as_str().unwrap().to_owned(),
            time: c["time"].as_f64().unwrap(),
            weights: floats(&c["weights"]),
            positions: points(&c["positions"]),
        },
    ));
    for (file, extent, case) in &checks {
        for path in ["", "--cpu", "--reference"] {
            let what = format!("{} '{}' at {} {path}", file.display(), case.animation, case.time);
            let out = run(file, &case.animation, case.time, path);
            let w = floats(&out["morph_weights"]);
            assert!(worst_weight(&w, &case.weights) <= WEIGHT_TOLERANCE, "{what}: {w:?}");
            let e = worst(points(&out["vertices"]), &case.positions) / extent;
            // AnimatedMorphCube's fixture was computed by three.js in its own way (r170).
            assert!(e <= 1e-4, "{what}: vertices off three.js by {e:.1e} of the extent");
        }
    }
}

fn load_path(path: &Path) -> Imported {
    gltf_import::load(path).unwrap_or_else(|e| panic!("{e}"))
}
