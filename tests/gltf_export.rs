//! glTF export: what `offline::gltf_export` writes reads back through `gltf_import` as the same
//! skeleton, meshes and samples within 1e-6, and passes the Khronos glTF Validator (its npm
//! package `gltf-validator`, installed under `target/` when node and npm are present; the check
//! says so and is skipped when they are not).

use glam::{DQuat, Quat};
use std::path::{Path, PathBuf};
use std::process::Command;
use wgpu_anim::offline::gltf_export;
use wgpu_anim::offline::gltf_import::{self, Imported};
use wgpu_anim::offline::retarget::{BoneMap, RetargetOptions, Retargeter};
use wgpu_anim::reference;
use wgpu_anim::{Clip, Skeleton, SkinnedMesh, mannequin};

fn angle(a: DQuat, b: DQuat) -> f64 {
    let d = a.inverse() * b;
    2.0 * d.xyz().length().atan2(d.w.abs())
}

fn round_trip(skeleton: &Skeleton, meshes: &[SkinnedMesh], clips: &[Clip]) -> (Vec<u8>, Imported) {
    let glb = gltf_export::to_glb(skeleton, meshes, clips).expect("exports");
    let back = gltf_import::load_slice(&glb, "exported.glb", None).expect("the export imports");
    (glb, back)
}

/// The largest difference between two clips of `skeleton`, sampled at `a`'s key times and
/// between them: (rotation in rad, translation and scale).
fn clip_difference(skeleton: &Skeleton, a: &Clip, b_skeleton: &Skeleton, b: &Clip) -> (f64, f64) {
    let mut times: Vec<f32> = a
        .tracks
        .iter()
        .flat_map(|t| t.rotation.iter().flat_map(|r| r.times.clone()))
        .collect();
    times.extend(times.clone().windows(2).map(|w| 0.5 * (w[0] + w[1])));
    let (sa, sb) = (
        reference::ClipSampler::new(skeleton, a),
        reference::ClipSampler::new(b_skeleton, b),
    );
    let (mut rotation, mut other) = (0.0f64, 0.0f64);
    for t in times {
        let (x, y) = (sa.sample(f64::from(t)), sb.sample(f64::from(t)));
        for (j, name) in skeleton.joint_names().iter().enumerate() {
            let k = b_skeleton.joint_index(name).expect("the joint came back");
            rotation = rotation.max(angle(x[j].rotation, y[k].rotation));
            other = other.max((x[j].translation - y[k].translation).abs().max_element());
            other = other.max((x[j].scale - y[k].scale).abs().max_element());
        }
    }
    (rotation, other)
}

#[test]
fn the_mannequin_comes_back_the_same() {
    let skeleton = mannequin::skeleton();
    let mesh = mannequin::mesh(&skeleton);
    assert!(!mesh.morph_targets.targets.is_empty());
    // The gaits breathe: a morph-weight track each, on the mesh's first target.
    let mut clips = mannequin::clips(&skeleton);
    mannequin::add_breathing(&mut clips);
    assert!(clips.iter().all(|c| !c.morph_weights.is_empty()));
    let (glb, back) = round_trip(&skeleton, std::slice::from_ref(&mesh), &clips);
    validate("mannequin.glb", &glb);
    assert_eq!(back.skeletons.len(), 1);
    let s = &back.skeletons[0];
    let b = &s.skeleton;
    // The skeleton: names, parents, rests and inverse binds.
    assert_eq!(b.joint_count(), skeleton.joint_count());
    for j in 0..skeleton.joint_count() {
        let k = b.joint_index(&skeleton.joint_names()[j]).unwrap();
        let parent = |sk: &Skeleton, x: usize| sk.parents()[x].map(|p| sk.joint_names()[p as usize].clone());
        assert_eq!(parent(&skeleton, j), parent(b, k));
        let (x, y) = (skeleton.rest_pose()[j], b.rest_pose()[k]);
        assert!((x.translation - y.translation).abs().max_element() <= 1e-6);
        assert!(x.rotation.angle_between(y.rotation) <= 1e-6);
        let m = skeleton.inverse_binds()[j] - b.inverse_binds()[k];
        assert!(
            m.to_cols_array().iter().all(|v| v.abs() <= 1e-6),
            "{}",
            skeleton.joint_names()[j]
        );
    }
    // The mesh: every attribute, its joints through the skin, its morph targets.
    assert_eq!(back.meshes.len(), 1);
    let got = &back.meshes[0].mesh;
    assert_eq!(
        (got.positions.len(), got.indices.len()),
        (mesh.positions.len(), mesh.indices.len())
    );
    assert_eq!(got.indices, mesh.indices);
    let close =
        |a: &[glam::Vec3], b: &[glam::Vec3]| a.iter().zip(b).all(|(x, y)| (*x - *y).abs().max_element() <= 1e-6);
    assert!(close(&got.positions, &mesh.positions) && close(&got.normals, &mesh.normals));
    for v in 0..mesh.positions.len() {
        for i in 0..4 {
            if mesh.weights[v][i] > 0.0 {
                let name = &skeleton.joint_names()[usize::from(mesh.joints[v][i])];
                assert_eq!(&b.joint_names()[usize::from(got.joints[v][i])], name);
                assert!((got.weights[v][i] - mesh.weights[v][i]).abs() <= 1e-6);
            }
        }
    }
    let (mt, gt) = (&mesh.morph_targets, &got.morph_targets);
    assert_eq!(gt.targets.len(), mt.targets.len());
    assert_eq!(gt.default_weights, mt.default_weights);
    for (x, y) in mt.targets.iter().zip(&gt.targets) {
        assert_eq!(x.name, y.name);
        let dense = |t: &wgpu_anim::morph::MorphTarget| {
            let mut p = vec![glam::Vec3::ZERO; mesh.positions.len()];
            t.deltas.iter().for_each(|d| p[d.vertex as usize] = d.position);
            p
        };
        assert!(close(&dense(x), &dense(y)), "{}", x.name);
    }
    // The clips, sampled at their keys and between.
    assert_eq!(s.clips.len(), clips.len());
    for (clip, got) in clips.iter().zip(&s.clips) {
        assert_eq!(got.clip.name, clip.name);
        let (rotation, other) = clip_difference(&skeleton, clip, b, &got.clip);
        assert!(
            rotation <= 1e-6 && other <= 1e-6,
            "{}: {rotation} rad, {other}",
            clip.name
        );
    }
    // The morph weights (a target the clip does not drive at its default weight), at the
    // breathing track's keys and between.
    let targets = mt.targets.len();
    for (c, clip) in clips.iter().enumerate() {
        let keys = &clip.morph_weights[0].times;
        let between = keys.windows(2).map(|w| 0.5 * (w[0] + w[1]));
        for t in keys.iter().copied().chain(between) {
            let want = reference::morph_weights(clip, &mt.default_weights, targets, f64::from(t));
            let got = back.morph_weights_at(0, c, f64::from(t));
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() <= 1e-6, "{} at {t}: {g} against {w}", clip.name);
            }
        }
    }
}

#[test]
fn a_retargeted_take_comes_back_the_same() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/cmu/cmu_01_03.glb");
    let cmu = gltf_import::load(&path).unwrap().skeletons.remove(0);
    let target = mannequin::skeleton();
    let map = BoneMap::humanoid(&cmu.skeleton, &target).unwrap();
    let options = RetargetOptions::default().with_source_skinned(cmu.skin_joints.clone());
    let r = Retargeter::new(&cmu.skeleton, &target, &map, &options).unwrap();
    let clip = r.retarget(&cmu.clips[0].clip).unwrap();
    let (glb, back) = round_trip(&target, &[mannequin::mesh(&target)], std::slice::from_ref(&clip));
    validate("cmu_on_mannequin.glb", &glb);
    let s = &back.skeletons[0];
    let (rotation, other) = clip_difference(&target, &clip, &s.skeleton, &s.clips[0].clip);
    assert!(rotation <= 1e-6 && other <= 1e-6, "{rotation} rad, {other}");
}

#[test]
fn a_mesh_of_another_skeleton_is_refused() {
    let skeleton = mannequin::skeleton();
    let mut mesh = mannequin::mesh(&skeleton);
    mesh.joints[0][0] = 999;
    mesh.weights[0] = [1.0, 0.0, 0.0, 0.0];
    let e = gltf_export::to_glb(&skeleton, std::slice::from_ref(&mesh), &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("999") && e.contains(&mesh.name), "{e}");
    mesh.positions.pop();
    let e = gltf_export::to_glb(&skeleton, &[mesh], &[]).unwrap_err().to_string();
    assert!(e.contains("mesh '"), "{e}");
    // A clip of no tracks is still an animation of its length.
    let (glb, back) = round_trip(&skeleton, &[], &[Clip::rest_pose("still", 1.5)]);
    validate("still.glb", &glb);
    let still = &back.skeletons[0].clips[0].clip;
    assert_eq!((still.name.as_str(), still.duration), ("still", 1.5));
    let mut clip = Clip::rest_pose("broken", 1.0);
    clip.duration = f32::NAN;
    assert!(gltf_export::to_glb(&skeleton, &[], &[clip]).is_err());
    let _ = Quat::IDENTITY;
}

/// Where the validator's package is (or is installed): `target/gltf-validator`.
fn validator_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("target/gltf-validator")
}

/// Runs the Khronos glTF Validator on `glb` when node is present (installing its npm package
/// under `target/` once); fails on any error it reports.
fn validate(name: &str, glb: &[u8]) {
    if let Some((ok, report)) = validator(name, glb) {
        assert!(ok, "{name}: {report}");
    }
}

#[test]
fn the_validator_sees_a_broken_file() {
    let skeleton = mannequin::skeleton();
    let mut glb = gltf_export::to_glb(&skeleton, &[mannequin::mesh(&skeleton)], &[]).unwrap();
    // The first accessor's component type made one glTF does not have (same length).
    let at = glb.windows(20).position(|w| w == b"\"componentType\":5126").unwrap();
    glb[at + 16..at + 20].copy_from_slice(b"5124");
    if let Some((ok, report)) = validator("broken.glb", &glb) {
        assert!(!ok, "{report}");
    }
}

/// The validator's verdict on `glb` (no error?) and its report, or `None` when it cannot run.
fn validator(name: &str, glb: &[u8]) -> Option<(bool, String)> {
    static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = INSTALL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = validator_dir();
    if Command::new("node").arg("--version").output().is_err() {
        eprintln!("{name}: node is not installed: the glTF Validator did not run");
        return None;
    }
    if !dir.join("node_modules/gltf-validator").exists() {
        let _ = std::fs::create_dir_all(&dir);
        let installed = Command::new("npm")
            .args(["install", "--no-audit", "--no-fund", "--prefix"])
            .arg(&dir)
            .arg("gltf-validator@2.0.0-dev.3.10")
            .output();
        if !matches!(&installed, Ok(o) if o.status.success()) {
            eprintln!("{name}: the npm package gltf-validator could not be installed: the glTF Validator did not run");
            return None;
        }
    }
    let file = dir.join(name);
    std::fs::write(&file, glb).unwrap();
    let script = "const v = require('gltf-validator'); const fs = require('fs');\
        v.validateBytes(new Uint8Array(fs.readFileSync(process.argv[1]))).then(r => {\
        console.log(JSON.stringify({errors: r.issues.numErrors, warnings: r.issues.numWarnings,\
        messages: r.issues.messages.filter(m => m.severity === 0).slice(0, 10)}));\
        process.exit(r.issues.numErrors > 0 ? 1 : 0); }, e => { console.error(e); process.exit(2); });";
    let out = Command::new("node")
        .current_dir(&dir)
        .args(["-e", script])
        .arg(&file)
        .output()
        .expect("node runs");
    let report = String::from_utf8_lossy(&out.stdout);
    eprintln!("{name}: glTF Validator: {report}");
    Some((
        out.status.success(),
        format!("{report} {}", String::from_utf8_lossy(&out.stderr)),
    ))
}
