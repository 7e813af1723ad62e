//! Conformance against independent fixtures (`tests/fixtures/conformance/*.json`): every real
//! asset is imported, sampled at the fixture's time and compared — world matrices of the joints,
//! skinning matrices and skinned vertices — within the fixture's tolerances.
//!
//! Paths checked: the f64 `reference`, the f32 CPU mirror, and the GPU when a device exists.
//! A `../shared/conformance` folder beside the clone may add fixtures; none is needed.

use glam::{DMat4, DVec3};
use serde::Deserialize;
use std::path::{Path, PathBuf};
use wgpu_anim::offline::compress::CompressionSettings;
use wgpu_anim::offline::gltf_import::{self, ClipSource, GltfPose, Imported, ImportedLibrary};
use wgpu_anim::reference;

#[derive(Deserialize, Clone)]
struct Tolerance {
    position: f64,
    rotation: f64,
}

#[derive(Deserialize, Clone)]
struct FixtureJoint {
    #[serde(default)]
    index: Option<usize>,
    node: usize,
    #[serde(default)]
    name: Option<String>,
    world: Vec<f64>,
}

#[derive(Deserialize, Clone)]
struct Fixture {
    asset: String,
    clip: usize,
    time: f64,
    skinned: bool,
    joints: Vec<FixtureJoint>,
    skin_matrices: Vec<Vec<f64>>,
    vertices: Vec<Vec<f64>>,
    tolerance: Tolerance,
}

/// Worst errors of one comparison, and what was out of tolerance.
#[derive(Default, Debug)]
struct Report {
    pos: f64,
    rot: f64,
    vert: f64,
    failures: Vec<String>,
}

impl Report {
    fn line(&self) -> String {
        format!("pos {:.1e} rot {:.1e} vert {:.1e}", self.pos, self.rot, self.vert)
    }
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The fixtures kept in the repository (`tests/fixtures/conformance`, copied from the shared
/// conformance set; see its README), then any further file of a `../shared/conformance` folder
/// beside the clone. The folder beside adds cases; it is never needed.
fn fixture_files() -> Vec<PathBuf> {
    let json_in = |dir: &Path| -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        files
    };
    let own = repo().join("tests/fixtures/conformance");
    let mut files = json_in(&own);
    assert!(!files.is_empty(), "no fixtures in {}", own.display());
    for extra in json_in(&repo().join("../shared/conformance")) {
        if !files.iter().any(|f| f.file_name() == extra.file_name()) {
            files.push(extra);
        }
    }
    files
}

fn fixtures() -> Vec<(String, Fixture)> {
    fixture_files()
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("read fixture");
            let fx: Fixture =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: bad fixture: {e}", p.display()));
            (p.file_name().unwrap().to_string_lossy().into_owned(), fx)
        })
        .collect()
}

/// The asset a fixture names: in the repository's `assets/`, else in `../shared/assets` (for
/// fixtures of new assets that appear there first).
fn asset_path(asset: &str) -> PathBuf {
    let own = repo().join("assets").join(asset);
    if own.is_file() {
        return own;
    }
    let beside = repo().join("../shared/assets").join(asset);
    if beside.is_file() { beside } else { own }
}

fn import(asset: &str) -> Imported {
    let path = asset_path(asset);
    gltf_import::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// The skeleton, the clip index within it and the clamped time a fixture asks for.
fn target(imp: &Imported, fx: &Fixture) -> (usize, usize, f64) {
    let s = imp.primary_skeleton().expect("a skeleton");
    let c = imp.skeletons[s]
        .clip_of_animation(fx.clip)
        .unwrap_or_else(|| panic!("{}: no clip for animation {}", fx.asset, fx.clip));
    let info = &imp.animations[fx.clip];
    let t = fx.time.clamp(f64::from(info.first_key), f64::from(info.duration));
    (s, c, t)
}

fn reference_pose(imp: &Imported, fx: &Fixture) -> GltfPose {
    let (s, c, t) = target(imp, fx);
    let sk = &imp.skeletons[s];
    let local = reference::sample(&sk.skeleton, &sk.clips[c].clip, t);
    let model = reference::local_to_model(&sk.skeleton, &local);
    let palette = reference::palette(&sk.skeleton, &model);
    imp.gltf_pose(s, &model, &palette, &imp.morph_weights_at(s, c, t))
        .expect("gltf pose")
}

fn compare_matrix(what: &str, got: &DMat4, want: &[f64], tol: &Tolerance, r: &mut Report) {
    if want.len() != 16 {
        r.failures
            .push(format!("{what}: fixture matrix has {} values", want.len()));
        return;
    }
    let g = got.to_cols_array();
    for col in 0..4 {
        for row in 0..3 {
            let k = col * 4 + row;
            let d = (g[k] - want[k]).abs();
            let d = if d.is_nan() { f64::INFINITY } else { d };
            let (worst, limit, kind) = if col == 3 {
                (&mut r.pos, tol.position, "translation")
            } else {
                (&mut r.rot, tol.rotation, "3x3")
            };
            *worst = worst.max(d);
            if d > limit {
                r.failures.push(format!(
                    "{what}: {kind} element [row {row}, col {col}] is {} but should be {} (|d| {d:.2e} > {limit:.1e})",
                    g[k], want[k]
                ));
            }
        }
    }
}

fn compare(fx: &Fixture, pose: &GltfPose) -> Report {
    let mut r = Report::default();
    if pose.skinned != fx.skinned {
        r.failures
            .push(format!("skinned is {} but should be {}", pose.skinned, fx.skinned));
    }
    if pose.joints.len() != fx.joints.len() {
        r.failures.push(format!(
            "{} joints but the fixture has {}",
            pose.joints.len(),
            fx.joints.len()
        ));
    }
    for (g, w) in pose.joints.iter().zip(&fx.joints) {
        if g.node != w.node || (w.index.is_some() && g.index != w.index) {
            r.failures.push(format!(
                "joint '{}' is node {} (index {:?}) but the fixture has node {} ('{}', index {:?})",
                g.name,
                g.node,
                g.index,
                w.node,
                w.name.as_deref().unwrap_or(""),
                w.index
            ));
            continue;
        }
        compare_matrix(
            &format!(
                "joint {} (node {}, '{}') world",
                g.index.unwrap_or(g.node),
                w.node,
                g.name
            ),
            &g.world,
            &w.world,
            &fx.tolerance,
            &mut r,
        );
    }
    if pose.skin_matrices.len() != fx.skin_matrices.len() {
        r.failures.push(format!(
            "{} skin matrices but the fixture has {}",
            pose.skin_matrices.len(),
            fx.skin_matrices.len()
        ));
    }
    for (i, (g, w)) in pose.skin_matrices.iter().zip(&fx.skin_matrices).enumerate() {
        compare_matrix(&format!("skin matrix {i}"), g, w, &fx.tolerance, &mut r);
    }
    if pose.vertices.len() != fx.vertices.len() {
        r.failures.push(format!(
            "{} vertices but the fixture has {}",
            pose.vertices.len(),
            fx.vertices.len()
        ));
    }
    for (v, (g, w)) in pose.vertices.iter().zip(&fx.vertices).enumerate() {
        let want = DVec3::new(
            w.first().copied().unwrap_or(f64::NAN),
            w.get(1).copied().unwrap_or(f64::NAN),
            w.get(2).copied().unwrap_or(f64::NAN),
        );
        let d = (*g - want)
            .to_array()
            .iter()
            .map(|x| if x.is_nan() { f64::INFINITY } else { x.abs() })
            .fold(0.0, f64::max);
        r.vert = r.vert.max(d);
        if d > fx.tolerance.position {
            r.failures.push(format!(
                "vertex {v}: {g:?} but should be {want:?} (|d| {d:.2e} > {:.1e})",
                fx.tolerance.position
            ));
        }
    }
    r
}

/// Writes a line straight to stderr, so it shows without `--nocapture` (the test harness only
/// captures the print macros).
fn say(line: &str) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn build(imp: &Imported, compressed: bool) -> ImportedLibrary {
    let source = if compressed {
        ClipSource::Compress(CompressionSettings::default())
    } else {
        ClipSource::Raw
    };
    imp.build_library_with(&source).unwrap_or_else(|e| panic!("{e}"))
}

/// Runs every fixture through `eval` (a path name and a pose maker) and fails with every
/// difference out of tolerance.
fn run_path(path: &str, mut eval: impl FnMut(&str, &Imported, &ImportedLibrary, &Fixture) -> GltfPose) {
    run_path_with(path, false, &mut eval);
}

/// As [`run_path`], the library's clips compressed with the default settings when `compressed`.
fn run_path_with(
    path: &str,
    compressed: bool,
    mut eval: impl FnMut(&str, &Imported, &ImportedLibrary, &Fixture) -> GltfPose,
) {
    let mut failed = Vec::new();
    let mut cache: Vec<(String, Imported, ImportedLibrary)> = Vec::new();
    for (name, fx) in fixtures() {
        if !cache.iter().any(|(a, _, _)| *a == fx.asset) {
            let imp = import(&fx.asset);
            let lib = build(&imp, compressed);
            cache.push((fx.asset.clone(), imp, lib));
        }
        let (_, imp, lib) = cache.iter().find(|(a, _, _)| *a == fx.asset).unwrap();
        let pose = eval(&name, imp, lib, &fx);
        let r = compare(&fx, &pose);
        say(&format!(
            "{name:<26} {path}: {}  (tol pos {:.1e} rot {:.1e}){}",
            r.line(),
            fx.tolerance.position,
            fx.tolerance.rotation,
            if r.failures.is_empty() { "" } else { "  FAIL" }
        ));
        for f in r.failures.iter().take(5) {
            say(&format!("    {f}"));
        }
        if !r.failures.is_empty() {
            failed.push(format!(
                "{name}: {} differences, first: {}",
                r.failures.len(),
                r.failures[0]
            ));
        }
    }
    assert!(
        failed.is_empty(),
        "{path} path out of tolerance:\n{}",
        failed.join("\n")
    );
}

#[test]
fn reference_matches_fixtures() {
    run_path("reference", |_, imp, _lib, fx| reference_pose(imp, fx));
}

/// A pose in f32 `Affine`s (CPU mirror or GPU read-back), in glTF terms.
fn affine_pose(imp: &Imported, s: usize, pose: &wgpu_anim::cpu::Pose) -> GltfPose {
    let model: Vec<DMat4> = pose.model.iter().map(|a| a.to_mat4().as_dmat4()).collect();
    let palette: Vec<DMat4> = pose.palette.iter().map(|a| a.to_mat4().as_dmat4()).collect();
    // No weights: the fixtures' meshes have no morph targets, and each path puts its own
    // vertices in.
    imp.gltf_pose(s, &model, &palette, &[]).expect("gltf pose")
}

/// The skinned vertices of mesh 0, primitive 0 as the crate's own skinning computes them (the CPU
/// mirror of the `skin` stage, or the GPU), when the fixture lists vertices.
fn mesh0(imp: &Imported, s: usize) -> Option<Vec<wgpu_anim::SkinVertex>> {
    imp.mesh(0, 0)
        .filter(|m| m.skeleton == s && imp.skeletons[s].skin.is_some())
        .map(|m| m.mesh.gpu_vertices())
}

fn points(p: &[wgpu_anim::cpu::SkinnedPoint]) -> Vec<DVec3> {
    p.iter().map(|p| p.position.truncate().as_dvec3()).collect()
}

#[test]
fn cpu_mirror_matches_fixtures() {
    cpu_mirror_path(false);
}

/// Every fixture through the library's clips compressed with the default settings.
#[test]
fn cpu_mirror_matches_fixtures_through_compressed_clips() {
    cpu_mirror_path(true);
}

fn cpu_mirror_path(compressed: bool) {
    let name = if compressed { "cpu, compressed" } else { "cpu" };
    run_path_with(name, compressed, |_, imp, lib, fx| {
        let (s, c, t) = target(imp, fx);
        let pose = wgpu_anim::cpu::pose_at(&lib.library, lib.clips[s][c], t as f32).unwrap();
        let mut g = affine_pose(imp, s, &pose);
        if let Some(v) = mesh0(imp, s) {
            g.vertices = points(&wgpu_anim::cpu::skin(&pose.palette, 0, &v).unwrap());
        }
        g
    });
}

/// The fixture `fx` would be at time `t` if its expected values were `pose`'s.
fn fixture_of(fx: &Fixture, t: f64, pose: &GltfPose) -> Fixture {
    let cols = |m: &DMat4| m.to_cols_array().to_vec();
    Fixture {
        time: t,
        joints: pose
            .joints
            .iter()
            .map(|j| FixtureJoint {
                index: j.index,
                node: j.node,
                name: Some(j.name.clone()),
                world: cols(&j.world),
            })
            .collect(),
        skin_matrices: pose.skin_matrices.iter().map(cols).collect(),
        vertices: pose.vertices.iter().map(|v| v.to_array().to_vec()).collect(),
        ..fx.clone()
    }
}

/// The CPU mirror and the GPU hold every fixture's tolerances at any time of its clip, not only
/// at the fixture's: 240 times spread over the clip, mostly between frames, against the f64
/// reference through the raw keys. The compressor measures its error at frames and a quarter of
/// the way between them; a game plays every time in between.
///
/// A time in f32 is only known to half a unit in its last place (5e-7 s at 10 s), and a packed
/// clip's frames sit up to another half unit from its f32 key times; where a joint turns fast that
/// is more than the tolerance: the CMU take's thumb turns 3 rad in one frame at 10.51 s (a
/// motion-capture marker swap), 370 rad/s. So a time out of tolerance passes only if it is within
/// the tolerance widened by how far the reference pose itself moves within one unit either side;
/// the test prints how many times that was needed (on the CMU take at most one of 240, raw or
/// compressed).
#[test]
fn cpu_mirror_holds_the_fixtures_tolerances_at_any_time() {
    any_time(false, None);
}

/// As [`cpu_mirror_holds_the_fixtures_tolerances_at_any_time`], through clips compressed with the
/// default settings.
#[test]
fn cpu_mirror_holds_the_fixtures_tolerances_at_any_time_through_compressed_clips() {
    any_time(true, None);
}

/// As [`cpu_mirror_holds_the_fixtures_tolerances_at_any_time`], on the GPU (its model matrices and
/// palettes; vertices skinned from its palette by the CPU mirror of `skin`), raw and compressed.
#[test]
fn gpu_holds_the_fixtures_tolerances_at_any_time() {
    let gpu = wgpu_anim::gpu::headless_device_with_limits(wgpu::Limits::default()).unwrap_or_else(|e| panic!("{e}"));
    any_time(false, Some(&gpu));
    any_time(true, Some(&gpu));
}

fn any_time(compressed: bool, gpu: Option<&(wgpu::Device, wgpu::Queue)>) {
    const TIMES: usize = 240;
    const ULPS: f64 = 1.0;
    let path = match (gpu.is_some(), compressed) {
        (false, false) => "cpu",
        (false, true) => "cpu, compressed",
        (true, false) => "gpu",
        (true, true) => "gpu, compressed",
    };
    let mut done: Vec<(String, usize)> = Vec::new();
    let mut failed = Vec::new();
    for (_, fx) in fixtures() {
        if done.contains(&(fx.asset.clone(), fx.clip)) {
            continue;
        }
        done.push((fx.asset.clone(), fx.clip));
        let imp = import(&fx.asset);
        let lib = build(&imp, compressed);
        let (s, c, _) = target(&imp, &fx);
        let info = &imp.animations[fx.clip];
        let (first, last) = (f64::from(info.first_key), f64::from(info.duration));
        let reference_at = |t: f64| reference_pose(&imp, &Fixture { time: t, ..fx.clone() });
        // Golden-ratio steps: spread over the clip, at every phase between frames.
        let times: Vec<f64> = (0..TIMES)
            .map(|k| first + (last - first) * ((k as f64 + 0.5) * 0.618_033_988_749_895).fract())
            .collect();
        let clip = lib.clips[s][c];
        let poses = match gpu {
            Some((device, queue)) => {
                let requests: Vec<_> = times.iter().map(|&t| (clip, t as f32)).collect();
                wgpu_anim::testing::evaluate_poses(device, queue, &lib.library, &requests)
                    .unwrap_or_else(|e| panic!("{}: {e}", fx.asset))
            }
            None => times
                .iter()
                .map(|&t| wgpu_anim::cpu::pose_at(&lib.library, clip, t as f32).unwrap())
                .collect(),
        };
        let mut worst = Report::default();
        let mut over = 0;
        for (&t, pose) in times.iter().zip(&poses) {
            let want = fixture_of(&fx, t, &reference_at(t));
            let mut got = affine_pose(&imp, s, pose);
            if let Some(v) = mesh0(&imp, s) {
                got.vertices = points(&wgpu_anim::cpu::skin(&pose.palette, 0, &v).unwrap());
            }
            let r = compare(&want, &got);
            worst.pos = worst.pos.max(r.pos);
            worst.rot = worst.rot.max(r.rot);
            worst.vert = worst.vert.max(r.vert);
            if r.failures.is_empty() {
                continue;
            }
            over += 1;
            // One unit in the last place of the f32 time (times here are positive).
            let ulp = f64::from(f32::from_bits((t as f32).to_bits() + 1)) - f64::from(t as f32);
            let mut tolerance = fx.tolerance.clone();
            for dt in [-ULPS * ulp, ULPS * ulp] {
                let moved = compare(&want, &reference_at((t + dt).clamp(first, last)));
                tolerance.position = tolerance
                    .position
                    .max(fx.tolerance.position + moved.pos.max(moved.vert));
                tolerance.rotation = tolerance.rotation.max(fx.tolerance.rotation + moved.rot);
            }
            let r = compare(&Fixture { tolerance, ..want }, &got);
            if let Some(f) = r.failures.first() {
                failed.push(format!("{} clip {} at {t:.4} s: {f}", fx.asset, fx.clip));
            }
        }
        say(&format!(
            "{:<42} {TIMES} times, {path}: {}  (tol pos {:.1e} rot {:.1e}; over it at {over} times, within it widened)",
            format!("{} clip {}", fx.asset, fx.clip),
            worst.line(),
            fx.tolerance.position,
            fx.tolerance.rotation
        ));
    }
    assert!(failed.is_empty(), "{path} out of tolerance:\n{}", failed.join("\n"));
}

#[test]
fn gpu_matches_fixtures() {
    gpu_path(false);
}

/// Every fixture through the library's clips compressed with the default settings, decoded on
/// the GPU.
#[test]
fn gpu_matches_fixtures_through_compressed_clips() {
    gpu_path(true);
}

fn gpu_path(compressed: bool) {
    use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, LoopMode};
    let (device, queue) =
        wgpu_anim::gpu::headless_device_with_limits(wgpu::Limits::default()).unwrap_or_else(|e| panic!("{e}"));
    // One GPU evaluation per asset, for all of its fixtures at once: matrices through
    // `evaluate_poses`, vertices through an animator and the `skin` shader.
    let all = fixtures();
    let mut poses: Vec<(String, GltfPose)> = Vec::new();
    let mut assets: Vec<&str> = all.iter().map(|(_, f)| f.asset.as_str()).collect();
    assets.sort_unstable();
    assets.dedup();
    let mut packed_assets = 0;
    for asset in assets {
        let imp = import(asset);
        let lib = build(&imp, compressed);
        if lib.library.has_compressed_clips() {
            packed_assets += 1;
        }
        let mine: Vec<&(String, Fixture)> = all.iter().filter(|(_, f)| f.asset == asset).collect();
        let requests: Vec<_> = mine
            .iter()
            .map(|(_, fx)| {
                let (s, c, t) = target(&imp, fx);
                (lib.clips[s][c], t as f32)
            })
            .collect();
        let got = wgpu_anim::testing::evaluate_poses(&device, &queue, &lib.library, &requests)
            .unwrap_or_else(|e| panic!("{asset}: {e}"));
        assert_eq!(got.len(), requests.len());
        let s = imp.primary_skeleton().expect("skeleton");
        let mut animator = Animator::new(
            &device,
            &lib.library,
            &AnimatorDesc::default().with_max_instances(requests.len() as u32),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        for &(clip, time) in &requests {
            animator
                .controller_mut()
                .add_instance(
                    &InstanceDesc::new(clip)
                        .with_time(time)
                        .with_rate(0.0)
                        .with_loop_mode(LoopMode::Once),
                )
                .unwrap_or_else(|e| panic!("{e}"));
        }
        animator.prepare(&queue, 0.0);
        let mut encoder = device.create_command_encoder(&Default::default());
        animator.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        for (k, ((name, _), pose)) in mine.iter().zip(&got).enumerate() {
            let mut g = affine_pose(&imp, s, pose);
            if let Some(v) = mesh0(&imp, s) {
                let offset = animator.controller().instances()[k].joint_offset;
                let p = wgpu_anim::testing::skin_on_gpu(&device, &queue, &animator, offset, &v)
                    .unwrap_or_else(|e| panic!("{e}"));
                g.vertices = points(&p);
            }
            poses.push((name.clone(), g));
        }
    }
    // The mocap take and the Fox at least decode packed tracks (the interpolation test's step
    // and cubic tracks may all stay raw).
    assert!(
        !compressed || packed_assets >= 2,
        "{packed_assets} assets with packed tracks"
    );
    run_path_with(
        if compressed { "gpu, compressed" } else { "gpu" },
        compressed,
        |name, _, _, _| poses.iter().find(|(n, _)| n == name).expect("evaluated").1.clone(),
    );
}

/// Dual-quaternion skinning of the real assets at every fixture's clip and time, on the GPU (the
/// palette stage's dual quaternions, the `skin` entry's `wgpu_anim_skin_blended_at`), against the
/// f64 reference's (`reference::skin_dual`, from the f64 palette, with glam's quaternions and its
/// own polar decomposition): every vertex within 1e-4 of the mesh's extent. None of these
/// assets scales a joint, so the renderer's rigid variant skins them (`tests/dual_quaternion.rs`
/// covers the two-phase one on scaled, sheared and mirrored joints). Linear skinning of the same
/// poses is farther from the reference than that somewhere (the check can fail).
#[test]
fn gpu_dual_quaternion_skinning_matches_the_f64_reference_on_real_assets() {
    use wgpu_anim::gpu::Skinning;
    use wgpu_anim::testing::skin_on_gpu_blended;
    use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, LoopMode};
    let (device, queue) =
        wgpu_anim::gpu::headless_device_with_limits(wgpu::Limits::default()).unwrap_or_else(|e| panic!("{e}"));
    let (mut checked, mut linear_off) = (0, 0);
    for (name, fx) in fixtures() {
        let imp = import(&fx.asset);
        let s = imp.primary_skeleton().expect("skeleton");
        let Some(mesh) = imp
            .mesh(0, 0)
            .filter(|m| m.skeleton == s && imp.skeletons[s].skin.is_some())
        else {
            continue;
        };
        let lib = build(&imp, false);
        let (_, c, t) = target(&imp, &fx);
        let desc = AnimatorDesc::default().with_max_instances(1).with_dual_quaternion(true);
        let mut animator = Animator::new(&device, &lib.library, &desc).unwrap_or_else(|e| panic!("{e}"));
        animator
            .controller_mut()
            .add_instance(
                &InstanceDesc::new(lib.clips[s][c])
                    .with_time(t as f32)
                    .with_rate(0.0)
                    .with_loop_mode(LoopMode::Once)
                    .with_skinning(Skinning::DualQuaternion),
            )
            .unwrap_or_else(|e| panic!("{e}"));
        animator.prepare(&queue, 0.0);
        let mut encoder = device.create_command_encoder(&Default::default());
        animator.encode(&mut encoder).unwrap();
        queue.submit([encoder.finish()]);
        let vertices = mesh.mesh.gpu_vertices();
        let sk = &imp.skeletons[s];
        let local = reference::sample(&sk.skeleton, &sk.clips[c].clip, t);
        let palette = reference::palette(&sk.skeleton, &reference::local_to_model(&sk.skeleton, &local));
        let expected = reference::skin_dual(&mesh.mesh, &palette);
        let extent = expected.iter().fold(0.0f64, |m, p| m.max(p.abs().max_element()));
        let worst = |got: &[wgpu_anim::cpu::SkinnedPoint]| {
            got.iter()
                .zip(&expected)
                .map(|(g, e)| (g.position.truncate().as_dvec3() - *e).abs().max_element())
                .fold(0.0f64, f64::max)
        };
        let dual = skin_on_gpu_blended(&device, &queue, &animator, 0, 1.0, &vertices).unwrap_or_else(|e| panic!("{e}"));
        let linear =
            skin_on_gpu_blended(&device, &queue, &animator, 0, 0.0, &vertices).unwrap_or_else(|e| panic!("{e}"));
        let (d, l) = (worst(&dual), worst(&linear));
        say(&format!(
            "{name}: dual quaternions within {:.1e} of the f64 reference (extent {extent:.3}); linear {:.1e}",
            d / extent,
            l / extent
        ));
        assert!(d <= 1e-4 * extent, "{name}: {d} against extent {extent}");
        linear_off += usize::from(l > 1e-4 * extent);
        checked += 1;
    }
    assert!(
        checked >= 3 && linear_off > 0,
        "{checked} checked, {linear_off} linear off"
    );
}

#[test]
fn comparison_catches_altered_matrices_and_vertices() {
    let dir = repo().join("tests/fixtures/conformance");
    let text = std::fs::read_to_string(dir.join("fox_run_t0.71.json")).expect("fixture");
    let fx: Fixture = serde_json::from_str(&text).expect("parse");
    let imp = import(&fx.asset);
    let good = reference_pose(&imp, &fx);
    assert!(compare(&fx, &good).failures.is_empty());

    let tol = fx.tolerance.clone();
    // A joint translation off by twice the tolerance.
    let mut bad = good.clone();
    bad.joints[5].world.w_axis.x += 2.0 * tol.position;
    let r = compare(&fx, &bad);
    assert!(r.failures.iter().any(|f| f.contains("translation")), "{r:?}");
    // One 3x3 element off by twice the tolerance.
    let mut bad = good.clone();
    bad.skin_matrices[3].y_axis.z += 2.0 * tol.rotation;
    let r = compare(&fx, &bad);
    assert!(
        r.failures
            .iter()
            .any(|f| f.contains("skin matrix 3") && f.contains("3x3")),
        "{r:?}"
    );
    // A vertex off by twice the tolerance, and a NaN.
    let mut bad = good.clone();
    bad.vertices[100].y -= 2.0 * tol.position;
    bad.vertices[7].x = f64::NAN;
    let r = compare(&fx, &bad);
    assert_eq!(
        r.failures.iter().filter(|f| f.starts_with("vertex")).count(),
        2,
        "{r:?}"
    );
    // Joints in the wrong order.
    let mut bad = good.clone();
    bad.joints.swap(1, 2);
    assert!(!compare(&fx, &bad).failures.is_empty());
    // Within tolerance is accepted.
    let mut ok = good;
    ok.joints[5].world.w_axis.x += 0.5 * tol.position;
    assert!(compare(&fx, &ok).failures.is_empty());
}

#[test]
fn the_repository_holds_its_fixtures_and_their_assets() {
    // A clone with nothing beside it runs every case above: each fixture kept in the repository
    // names an asset kept in the repository, and every real animated asset has fixtures.
    let own = repo().join("tests/fixtures/conformance");
    let mut assets: Vec<String> = std::fs::read_dir(&own)
        .expect("tests/fixtures/conformance")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let fx: Fixture = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            assert!(
                repo().join("assets").join(&fx.asset).is_file(),
                "{}: asset {} is not in assets/",
                p.display(),
                fx.asset
            );
            fx.asset
        })
        .collect();
    assets.sort();
    assets.dedup();
    for family in ["Fox", "cmu", "InterpolationTest", "simple_skin"] {
        assert!(
            assets.iter().any(|a| a.starts_with(family)),
            "no fixture for {family} in {}",
            own.display()
        );
    }
    assert!(repo().join("assets/LICENSES.md").is_file());
}

/// A pose read back from `wgpu-anim sample --json`.
fn pose_from_json(v: &serde_json::Value) -> GltfPose {
    let mat = |m: &serde_json::Value| {
        let a: Vec<f64> = serde_json::from_value(m.clone()).expect("16 floats");
        DMat4::from_cols_slice(&a)
    };
    GltfPose {
        skinned: v["skinned"].as_bool().expect("skinned"),
        joints: v["joints"]
            .as_array()
            .expect("joints")
            .iter()
            .map(|j| gltf_import::GltfJoint {
                index: j["index"].as_u64().map(|i| i as usize),
                node: j["node"].as_u64().expect("node") as usize,
                name: j["name"].as_str().expect("name").to_string(),
                world: mat(&j["world"]),
            })
            .collect(),
        skin_matrices: v["skin_matrices"]
            .as_array()
            .expect("skin_matrices")
            .iter()
            .map(mat)
            .collect(),
        vertices: v["vertices"]
            .as_array()
            .expect("vertices")
            .iter()
            .map(|p| {
                let a: [f64; 3] = serde_json::from_value(p.clone()).expect("xyz");
                DVec3::from_array(a)
            })
            .collect(),
        morph_weights: v["morph_weights"]
            .as_array()
            .map(|w| w.iter().map(|w| w.as_f64().expect("a weight")).collect())
            .unwrap_or_default(),
    }
}

#[test]
fn cli_sample_json_matches_fixtures() {
    let dir = repo().join("tests/fixtures/conformance");
    for name in ["fox_walk_t0.37.json", "interp_c4_t0.3.json", "cmu_01_03_t1.json"] {
        let fx: Fixture =
            serde_json::from_str(&std::fs::read_to_string(dir.join(name)).expect("fixture")).expect("parse");
        for (path, flag) in [
            ("cpu", Some("--cpu")),
            ("reference", Some("--reference")),
            ("gpu", None),
        ] {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_wgpu-anim"))
                .arg("sample")
                .arg(asset_path(&fx.asset))
                .args(["--clip", &fx.clip.to_string(), "--time", &fx.time.to_string()])
                .args(flag)
                .arg("--json")
                .output()
                .expect("run wgpu-anim");
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
            assert_eq!(v["clip"], fx.clip);
            let r = compare(&fx, &pose_from_json(&v));
            say(&format!("{name:<26} cli {path}: {}", r.line()));
            assert!(r.failures.is_empty(), "{name} {path}: {:?}", r.failures);
        }
    }
}
