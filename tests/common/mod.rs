//! Helpers shared by the integration tests.
#![allow(dead_code)]

use glam::{Quat, Vec2, Vec3};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use wgpu_anim::blend::{Blend2DKind, BlendNode, BlendTree};
use wgpu_anim::layout::LocalPose;
use wgpu_anim::math::Affine;
use wgpu_anim::{
    AnimationLibrary, Clip, ClipId, Interpolation, JointTrack, LibraryBuilder, Skeleton, Track, Transform,
};

/// The device every GPU test runs on, requested with exactly WebGPU's default limits
/// (`wgpu::Limits::default()`), so a pipeline that needs more fails the tests. CI installs
/// lavapipe; a machine without any Vulkan driver fails here with the install hint.
pub fn device() -> (wgpu::Device, wgpu::Queue) {
    wgpu_anim::gpu::headless_device_with_limits(wgpu::Limits::default()).unwrap_or_else(|e| panic!("{e}"))
}

pub fn rng(seed: u64) -> SmallRng {
    SmallRng::seed_from_u64(seed)
}

pub fn random_quat(r: &mut SmallRng) -> Quat {
    let q = Quat::from_euler(
        glam::EulerRot::XYZ,
        r.gen_range(-3.0..3.0),
        r.gen_range(-1.5..1.5),
        r.gen_range(-3.0..3.0),
    );
    // Either sign: both stand for the same rotation, and the sampler must take the short arc.
    if r.gen_bool(0.5) { -q } else { q }
}

/// A random tree of `n` joints listed parents-first.
pub fn random_skeleton(r: &mut SmallRng, name: &str, n: usize) -> Skeleton {
    let joints = (0..n)
        .map(|i| {
            let parent = if i == 0 {
                None
            } else {
                Some(r.gen_range(i.saturating_sub(4)..i))
            };
            let rest = Transform::new(
                Vec3::new(r.gen_range(-0.3..0.3), r.gen_range(0.05..0.4), r.gen_range(-0.3..0.3)),
                random_quat(r),
                Vec3::new(r.gen_range(0.9..1.1), r.gen_range(0.9..1.1), r.gen_range(0.9..1.1)),
            );
            (format!("{name}_{i}"), parent, rest)
        })
        .collect();
    Skeleton::from_rest_pose(name, joints).unwrap()
}

fn random_times(r: &mut SmallRng, duration: f32) -> Vec<f32> {
    let n = r.gen_range(2..12);
    let mut t: Vec<f32> = (0..n).map(|_| r.gen_range(0.0..duration)).collect();
    t.push(0.0);
    t.push(duration);
    t.sort_by(f32::total_cmp);
    t.dedup_by(|a, b| (*a - *b).abs() < 1e-3);
    t
}

fn interp(r: &mut SmallRng) -> Interpolation {
    [
        Interpolation::Step,
        Interpolation::Linear,
        Interpolation::Linear,
        Interpolation::CubicSpline,
    ][r.gen_range(0..4)]
}

fn values<T: Copy>(
    r: &mut SmallRng,
    i: Interpolation,
    n: usize,
    mut f: impl FnMut(&mut SmallRng) -> T,
    tangent: impl Fn(&mut SmallRng) -> T,
) -> Vec<T> {
    (0..n)
        .flat_map(|_| {
            if i == Interpolation::CubicSpline {
                let a = tangent(r);
                let v = f(r);
                let b = tangent(r);
                vec![a, v, b]
            } else {
                vec![f(r)]
            }
        })
        .collect()
}

/// Every track of `clip` keyed at one set of random times, as a take exported at one rate is:
/// its joint 0's rotation animated (added where missing), each track's values cycled to the new
/// count of keys (a cubic spline's in threes).
pub fn share_key_times(r: &mut SmallRng, clip: &mut Clip, skeleton: &Skeleton) {
    fn rekey<T: Copy>(track: &mut Option<Track<T>>, times: &[f32]) {
        if let Some(t) = track {
            let per_key = if t.interpolation == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            let old = std::mem::take(&mut t.values);
            t.values = (0..times.len() * per_key).map(|k| old[k % old.len()]).collect();
            t.times = times.to_vec();
        }
    }
    let root = skeleton.joint_names()[0].clone();
    if !clip.tracks.iter().any(|t| t.joint == root) {
        clip.tracks.push(JointTrack {
            joint: root.clone(),
            ..Default::default()
        });
    }
    let first = clip.tracks.iter_mut().find(|t| t.joint == root).unwrap();
    if first.rotation.is_none() {
        first.rotation = Some(Track {
            interpolation: Interpolation::Linear,
            times: vec![0.0, clip.duration],
            values: vec![random_quat(r), random_quat(r)],
        });
    }
    let times = random_times(r, clip.duration);
    for t in &mut clip.tracks {
        rekey(&mut t.translation, &times);
        rekey(&mut t.rotation, &times);
        rekey(&mut t.scale, &times);
    }
}

/// A clip animating a random subset of the skeleton's joints with every interpolation mode.
pub fn random_clip(r: &mut SmallRng, skeleton: &Skeleton, name: &str) -> Clip {
    let duration = r.gen_range(0.5..3.0);
    let animated: Vec<&String> = skeleton.joint_names().iter().filter(|_| r.gen_bool(0.8)).collect();
    let tracks = animated
        .into_iter()
        .map(|joint| {
            let mut track = JointTrack {
                joint: joint.clone(),
                ..Default::default()
            };
            if r.gen_bool(0.6) {
                let (i, times) = (interp(r), random_times(r, duration));
                let v = values(
                    r,
                    i,
                    times.len(),
                    |r| Vec3::new(r.gen_range(-0.5..0.5), r.gen_range(-0.5..0.5), r.gen_range(-0.5..0.5)),
                    |r| Vec3::splat(r.gen_range(-1.0..1.0)),
                );
                track.translation = Some(Track {
                    interpolation: i,
                    times,
                    values: v,
                });
            }
            if r.gen_bool(0.9) {
                let (i, times) = (interp(r), random_times(r, duration));
                let v = values(r, i, times.len(), random_quat, |r| {
                    Quat::from_xyzw(r.gen_range(-0.5..0.5), r.gen_range(-0.5..0.5), 0.1, 0.2)
                });
                track.rotation = Some(Track {
                    interpolation: i,
                    times,
                    values: v,
                });
            }
            if r.gen_bool(0.3) {
                let (i, times) = (interp(r), random_times(r, duration));
                let v = values(
                    r,
                    i,
                    times.len(),
                    |r| Vec3::new(r.gen_range(0.8..1.2), r.gen_range(0.8..1.2), r.gen_range(0.8..1.2)),
                    |r| Vec3::splat(r.gen_range(-0.2..0.2)),
                );
                track.scale = Some(Track {
                    interpolation: i,
                    times,
                    values: v,
                });
            }
            track
        })
        .collect();
    Clip {
        morph_weights: Vec::new(),
        events: Vec::new(),
        curves: Vec::new(),
        name: name.into(),
        duration,
        looping: true,
        tracks,
    }
}

/// Clips of each skeleton in [`random_library`]: as many as a tree may weight at once, so a tree
/// can have that many distinct weighted leaves.
pub const CLIPS_PER_SKELETON: u32 = wgpu_anim::layout::MAX_BLEND_CLIPS;
/// Trees of each skeleton in [`random_library`] (those of [`random_trees`]).
pub const TREES_PER_SKELETON: u32 = 11;
/// Index of the 16-child direct tree and of the bilinear space of bilinear spaces among a
/// skeleton's trees.
pub const DIRECT_16: u32 = 9;
pub const BILINEAR_OF_BILINEARS: u32 = 10;

/// One blend tree per blend-space kind over the skeleton's clips (leaf k plays clip k), a nested
/// tree (a 1D blend on parameter 2 of a freeform directional and a Delaunay blend space), and two
/// trees of 16 distinct leaves: a direct blend of 16 children (child k weighted by parameter
/// k mod 4) and a bilinear space (parameters 0, 1) of four bilinear spaces (parameters 2, 3).
pub fn random_trees(clips: &[ClipId], prefix: &str) -> Vec<BlendTree> {
    let leaf = |k: usize| BlendNode::Clip(clips[k % clips.len()]);
    let space = |kind, points: &[(f32, f32)]| -> BlendNode {
        BlendNode::Blend2D {
            kind,
            parameters: [0, 1],
            children: points
                .iter()
                .enumerate()
                .map(|(k, &(x, y))| (Vec2::new(x, y), k + 1))
                .collect(),
        }
    };
    let tree = |name: &str, root: BlendNode, leaves: usize| BlendTree {
        name: format!("{prefix}_{name}"),
        nodes: std::iter::once(root).chain((0..leaves).map(leaf)).collect(),
        root: 0,
    };
    let ring = [(0.0, 0.0), (0.0, 1.0), (1.0, 0.0), (0.0, -1.0), (-1.0, 0.0), (0.0, 2.0)];
    vec![
        tree(
            "1d",
            BlendNode::Blend1D {
                parameter: 0,
                children: vec![(-1.0, 1), (0.0, 2), (1.5, 3)],
            },
            3,
        ),
        tree(
            "bilinear",
            space(
                Blend2DKind::Bilinear,
                &[(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0)],
            ),
            4,
        ),
        tree(
            "triangle",
            space(Blend2DKind::Triangle, &[(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)]),
            3,
        ),
        tree(
            "delaunay",
            space(
                Blend2DKind::Delaunay,
                &[(-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0), (1.0, 1.0), (0.2, 0.1)],
            ),
            5,
        ),
        tree("simple", space(Blend2DKind::SimpleDirectional, &ring[..5]), 5),
        tree("cartesian", space(Blend2DKind::FreeformCartesian, &ring), 6),
        tree("directional", space(Blend2DKind::FreeformDirectional, &ring), 6),
        tree(
            "direct",
            BlendNode::Direct {
                children: vec![(2, 1), (3, 2)],
            },
            2,
        ),
        BlendTree {
            name: format!("{prefix}_nested"),
            nodes: vec![
                BlendNode::Blend1D {
                    parameter: 2,
                    children: vec![(0.0, 1), (1.0, 2)],
                },
                BlendNode::Blend2D {
                    kind: Blend2DKind::FreeformDirectional,
                    parameters: [0, 1],
                    children: ring
                        .iter()
                        .enumerate()
                        .map(|(k, &(x, y))| (Vec2::new(x, y), 3 + k % 3))
                        .collect(),
                },
                BlendNode::Blend2D {
                    kind: Blend2DKind::Delaunay,
                    parameters: [0, 1],
                    children: vec![
                        (Vec2::new(-1.0, -1.0), 3),
                        (Vec2::new(1.0, -1.0), 4),
                        (Vec2::new(0.0, 1.0), 5),
                    ],
                },
                leaf(0),
                leaf(1),
                leaf(2),
            ],
            root: 0,
        },
        tree(
            "direct16",
            BlendNode::Direct {
                children: (0..16).map(|k| (k as u32 % 4, k + 1)).collect(),
            },
            16,
        ),
        BlendTree {
            name: format!("{prefix}_bilinear16"),
            nodes: std::iter::once(space_of([0, 1], (-2.5, 2.5), [1, 2, 3, 4]))
                .chain((0..4).map(|q| space_of([2, 3], (0.0, 1.0), [5 + 4 * q, 6 + 4 * q, 7 + 4 * q, 8 + 4 * q])))
                .chain((0..16).map(leaf))
                .collect(),
            root: 0,
        },
    ]
}

/// A bilinear space on `parameters` with corners at `lo` and `hi` on both axes over nodes
/// `children`.
fn space_of(parameters: [u32; 2], (lo, hi): (f32, f32), children: [usize; 4]) -> BlendNode {
    let corners = [
        Vec2::new(lo, lo),
        Vec2::new(hi, lo),
        Vec2::new(lo, hi),
        Vec2::new(hi, hi),
    ];
    BlendNode::Blend2D {
        kind: Blend2DKind::Bilinear,
        parameters,
        children: corners.into_iter().zip(children).collect(),
    }
}

/// Skeletons of 1, 37 and 130 joints (more than a workgroup), [`CLIPS_PER_SKELETON`] random clips
/// each, and for each skeleton the trees of [`random_trees`] and a random mask.
pub fn random_library(seed: u64) -> (wgpu_anim::AnimationLibrary, Vec<Clip>) {
    random_library_of(seed, &[1, 37, 130])
}

/// As [`random_library`], with skeletons of the given sizes.
pub fn random_library_of(seed: u64, sizes: &[usize]) -> (wgpu_anim::AnimationLibrary, Vec<Clip>) {
    random_library_with_sockets(seed, sizes, &[])
}

/// As [`random_library_of`], skeleton `k` with `sockets[k]` sockets (none past the list) on
/// random joints with random offsets (non-uniform scale included).
pub fn random_library_with_sockets(
    seed: u64,
    sizes: &[usize],
    sockets: &[usize],
) -> (wgpu_anim::AnimationLibrary, Vec<Clip>) {
    random_library_full(seed, sizes, sockets, false, 0)
}

/// As [`random_library_with_sockets`], and with `events`, 0 to 4 random events per clip (names
/// `a` to `d`; times anywhere in the clip, its ends included; thresholds 0, 0.3 or 0.7), and with
/// `morph_targets` above 0, up to that many morph-weight tracks per clip (some without keys, the
/// keys step, linear or cubic), each drawn from its own generator so that the rest is the same
/// library.
pub fn random_library_full(
    seed: u64,
    sizes: &[usize],
    sockets: &[usize],
    events: bool,
    morph_targets: usize,
) -> (wgpu_anim::AnimationLibrary, Vec<Clip>) {
    random_library_built(seed, sizes, sockets, events, morph_targets, false)
}

/// As [`random_library`], each clip keying all its tracks at one set of times
/// ([`share_key_times`]): the library the sample stage searches once per character and sample
/// (`AnimationLibrary::clips_share_key_times`).
#[allow(dead_code)]
pub fn random_library_sharing_key_times(seed: u64) -> (wgpu_anim::AnimationLibrary, Vec<Clip>) {
    random_library_built(seed, &[1, 37, 130], &[], false, 0, true)
}

fn random_library_built(
    seed: u64,
    sizes: &[usize],
    sockets: &[usize],
    events: bool,
    morph_targets: usize,
    share_times: bool,
) -> (wgpu_anim::AnimationLibrary, Vec<Clip>) {
    let mut r = rng(seed);
    let mut event_rng = rng(seed ^ 0x5eed_e7e7);
    let mut morph_rng = rng(seed ^ 0x0b1e_5ade);
    let mut b = LibraryBuilder::new();
    let mut clips = Vec::new();
    for (k, &n) in sizes.iter().enumerate() {
        let mut s = random_skeleton(&mut r, &format!("s{k}"), n);
        for m in 0..sockets.get(k).copied().unwrap_or(0) {
            let joint = s.joint_names()[r.gen_range(0..n)].clone();
            let offset = Transform::new(
                Vec3::new(r.gen_range(-0.2..0.2), r.gen_range(-0.2..0.2), r.gen_range(-0.2..0.2)),
                random_quat(&mut r),
                Vec3::new(r.gen_range(0.5..1.5), r.gen_range(0.5..1.5), r.gen_range(0.5..1.5)),
            );
            s.add_socket(&format!("socket{m}"), &joint, offset).unwrap();
        }
        let id = b.add_skeleton(s.clone());
        let mut ids: Vec<ClipId> = Vec::with_capacity(CLIPS_PER_SKELETON as usize);
        for c in 0..CLIPS_PER_SKELETON as usize {
            let mut clip = random_clip(&mut r, &s, &format!("s{k}_c{c}"));
            if share_times {
                share_key_times(&mut r, &mut clip, &s);
            }
            if events {
                let e = &mut event_rng;
                for _ in 0..e.gen_range(0..5) {
                    let time = match e.gen_range(0..6) {
                        0 => 0.0,
                        1 => clip.duration,
                        _ => e.gen_range(0.0..clip.duration),
                    };
                    clip.events.push(wgpu_anim::ClipEvent {
                        name: ["a", "b", "c", "d"][e.gen_range(0..4)].to_owned(),
                        time,
                        threshold: [0.0, 0.3, 0.7][e.gen_range(0..3)],
                    });
                }
            }
            if morph_targets > 0 {
                clip.morph_weights = random_morph_tracks(&mut morph_rng, morph_targets, clip.duration);
            }
            ids.push(b.add_clip(id, &clip).unwrap());
            clips.push(clip);
        }
        let trees = random_trees(&ids, &format!("s{k}"));
        assert_eq!(trees.len() as u32, TREES_PER_SKELETON);
        for tree in trees {
            b.add_blend_tree(&tree).unwrap_or_else(|e| panic!("{e}"));
        }
        // Mask k belongs to skeleton k: a random weight per joint, some exactly 0 or 1.
        let weights: Vec<f32> = (0..n)
            .map(|_| [0.0, 1.0, r.gen_range(0.0..1.0)][r.gen_range(0..3)])
            .collect();
        b.add_mask(id, &format!("s{k}_mask"), &weights).unwrap();
    }
    (b.build(), clips)
}

/// Up to `targets` morph-weight tracks over `duration` seconds: a fifth without keys (driving
/// nothing), the others 1 to 5 keys of weights in [-0.5, 1.5], step, linear or cubic.
pub fn random_morph_tracks(r: &mut SmallRng, targets: usize, duration: f32) -> Vec<wgpu_anim::Track<f32>> {
    (0..r.gen_range(1..=targets))
        .map(|_| {
            if r.gen_bool(0.2) {
                return wgpu_anim::Track::default();
            }
            let keys = r.gen_range(1..6usize);
            let mut times: Vec<f32> = (0..keys).map(|_| r.gen_range(0.0..duration)).collect();
            times.sort_by(f32::total_cmp);
            times.dedup();
            let interpolation =
                [Interpolation::Step, Interpolation::Linear, Interpolation::CubicSpline][r.gen_range(0..3)];
            let per_key = if interpolation == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            let values = (0..times.len() * per_key).map(|_| r.gen_range(-0.5..1.5)).collect();
            wgpu_anim::Track {
                interpolation,
                times,
                values,
            }
        })
        .collect()
}

/// A library laid out as [`random_library`]'s for one skeleton of `joints` joints (its clips,
/// trees and mask, so that [`random_state`] and [`random_layers`] apply), clip `k` added by
/// `add(builder, skeleton id, skeleton, clip, k, generator)` (with root motion, curves, ...).
#[allow(dead_code)]
pub fn random_library_one_skeleton(
    seed: u64,
    joints: usize,
    mut add: impl FnMut(&mut LibraryBuilder, wgpu_anim::SkeletonId, &Skeleton, Clip, u32, &mut SmallRng) -> ClipId,
) -> wgpu_anim::AnimationLibrary {
    let mut r = rng(seed);
    let skeleton = random_skeleton(&mut r, "s", joints);
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(skeleton.clone());
    let mut ids = Vec::new();
    for k in 0..CLIPS_PER_SKELETON {
        let clip = random_clip(&mut r, &skeleton, &format!("c{k}"));
        ids.push(add(&mut b, s, &skeleton, clip, k, &mut r));
    }
    for tree in random_trees(&ids, "s") {
        b.add_blend_tree(&tree).unwrap();
    }
    let weights: Vec<f32> = (0..joints).map(|_| r.gen_range(0.0..1.0)).collect();
    b.add_mask(s, "mask", &weights).unwrap();
    b.build()
}

/// Largest element-wise error of two affine matrices, relative to `1 + |reference element|`.
/// Largest relative difference of two local poses' components.
pub fn pose_error(g: &LocalPose, w: &LocalPose) -> f32 {
    let e = |a: glam::Vec4, b: glam::Vec4| ((a - b).abs() / (b.abs() + 1.0)).max_element();
    e(g.translation, w.translation)
        .max(e(g.rotation, w.rotation))
        .max(e(g.scale, w.scale))
}

pub fn affine_error(got: &Affine, want: &Affine) -> f32 {
    let rows = [(got.x, want.x), (got.y, want.y), (got.z, want.z)];
    rows.iter()
        .map(|(g, w)| ((*g - *w).abs() / (w.abs() + 1.0)).max_element())
        .fold(0.0, f32::max)
}

/// Compares two per-joint buffers; on failure names the first joint out of tolerance.
pub fn compare<T>(
    what: &str,
    got: &[T],
    want: &[T],
    tolerance: f32,
    error: impl Fn(&T, &T) -> f32,
) -> Result<f32, String> {
    if got.len() != want.len() {
        return Err(format!("{what}: {} entries, expected {}", got.len(), want.len()));
    }
    let mut worst = 0.0f32;
    for (j, (g, w)) in got.iter().zip(want).enumerate() {
        let e = error(g, w);
        if e.is_nan() || e > tolerance {
            return Err(format!("{what}: entry {j} off by {e:e} (tolerance {tolerance:e})"));
        }
        worst = worst.max(e);
    }
    Ok(worst)
}

/// A clip or a blend tree of `skeleton` (as [`random_library`] builds them), with random
/// parameters.
pub fn random_state(r: &mut SmallRng, lib: &AnimationLibrary, skeleton: u32) -> wgpu_anim::InstanceDesc {
    if r.gen_bool(0.5) {
        let clip = skeleton * CLIPS_PER_SKELETON + r.gen_range(0..CLIPS_PER_SKELETON);
        wgpu_anim::InstanceDesc::new(lib.clip_at(clip).expect("a clip of the random library"))
    } else {
        let params = [
            r.gen_range(-2.5..2.5),
            r.gen_range(-2.5..2.5),
            r.gen_range(-0.5..1.5),
            r.gen_range(-0.5..1.5),
        ];
        let tree = skeleton * TREES_PER_SKELETON + r.gen_range(0..TREES_PER_SKELETON);
        wgpu_anim::InstanceDesc::tree(lib.blend().tree_at(tree).expect("a tree of the random library"), params)
    }
}

/// Random layers (every mode, masks, clips sampled at a parameter, trees) on about a third of
/// the animator's instances.
pub fn random_layers(animator: &mut wgpu_anim::Animator, r: &mut SmallRng) {
    use wgpu_anim::gpu::{Layer, LayerMode};
    let lib = animator.controller().library_arc().clone();
    for i in 0..animator.controller().instance_count() {
        if r.gen_range(0..3) != 0 {
            continue;
        }
        let skel = animator.controller().instance(i).unwrap().skeleton;
        for slot in 0..3 {
            if r.gen_bool(0.4) {
                continue;
            }
            let mode = [LayerMode::Override, LayerMode::AdditiveLocal, LayerMode::AdditiveMesh][r.gen_range(0..3)];
            let mut layer = match random_state(r, &lib, skel) {
                wgpu_anim::InstanceDesc { tree: Some(t), .. } => Layer::tree(mode, t),
                d => Layer::clip(mode, d.clip),
            };
            layer.weight = r.gen_range(0.0..1.0);
            layer.mask = r.gen_bool(0.5).then(|| lib.mask_at(skel).expect("a mask per skeleton"));
            layer.start = r.gen_range(0.0..1.0);
            layer.once = r.gen_bool(0.3);
            if layer.tree.is_none() && r.gen_bool(0.3) {
                layer.time_parameter = Some(r.gen_range(2..4));
            }
            match animator.controller_mut().set_layer(i, slot, Some(&layer), false) {
                Ok(()) => {}
                // A random clip played as an additive layer on a deep random skeleton may
                // compound past `reach::MAX_REACH` (the bound takes every key at its largest
                // at once): refused, the instance keeping its other layers.
                Err(wgpu_anim::Error::Instance { what, .. }) if what.contains("may reach") => {}
                Err(e) => panic!("{e}"),
            }
        }
    }
}

/// Clocks are integers (ticks and loops) computed with integer operations only: a clip's clock
/// on the GPU equals the mirror's bit for bit, at loop boundaries too. A blend tree's advance
/// `rate · dt / D` divides by its blended duration `D`, an f32 sum of f32 weights that may differ
/// by a rounding between the two; its phase (loops and ticks together, so that a wrap on one
/// side only still compares) agrees within 1e-5 of a cycle plus 1e-6 of the frame's advance.
pub fn assert_clock(
    animator: &wgpu_anim::Animator,
    dt: f32,
    i: usize,
    g: &wgpu_anim::layout::GpuClock,
    w: &wgpu_anim::layout::GpuClock,
) {
    use wgpu_anim::layout::{TICK_BITS, source_kind};
    let inst = animator.controller().instances()[i];
    let layer_tree = |k: usize| {
        inst.flags & (wgpu_anim::layout::LAYER_ON << k) != 0
            && animator.controller().layer_defs()[inst.layers[k].def as usize].tree_nodes > 0
    };
    let trees = [
        inst.tree_nodes > 0,
        inst.source_kind() == source_kind::TREE,
        layer_tree(0),
        layer_tree(1),
        layer_tree(2),
    ];
    let rates = [
        inst.rate,
        inst.source_rate,
        inst.layers[0].rate,
        inst.layers[1].rate,
        inst.layers[2].rate,
    ];
    let shortest = animator
        .controller()
        .library()
        .clips()
        .iter()
        .map(|c| c.duration)
        .fold(f32::MAX, f32::min);
    let fields = |c: &wgpu_anim::layout::GpuClock| {
        [
            (c.loops, c.time),
            (c.source_loops, c.source_time),
            (0, c.layer_time[0]),
            (0, c.layer_time[1]),
            (0, c.layer_time[2]),
        ]
    };
    assert_eq!(
        (g.seq, g.layer_seq, g.transition_time),
        (w.seq, w.layer_seq, w.transition_time),
        "instance {i}"
    );
    for (k, ((gl, gt), (wl, wt))) in fields(g).into_iter().zip(fields(w)).enumerate() {
        if (gl, gt) == (wl, wt) {
            continue;
        }
        assert!(trees[k], "instance {i}, clock {k}: GPU {g:?}, mirror {w:?}");
        let cycles = f64::from(gl.wrapping_sub(wl) as i32);
        let phase = cycles + (gt.get() - wt.get()) as f64 / (1u64 << TICK_BITS) as f64;
        let advance = f64::from(rates[k] * dt).abs() / f64::from(shortest);
        assert!(
            phase.abs() < 1e-5 + 1e-6 * advance,
            "instance {i}, tree clock {k}: {phase} cycles apart"
        );
    }
}

/// The mannequin's joints renamed to Mixamo's (the humanoid slots; others `mixamorig:x_NAME`),
/// legs `legs` times as long, arms 0.9, the rest of the body 1.05, and upper arms raised
/// `raise` radians in the rest (a T-pose for about 0.6).
pub fn mannequin_variant(legs: f32, raise: f32) -> Skeleton {
    let m = wgpu_anim::mannequin::skeleton();
    let mixamo = [
        ("pelvis", "Hips"),
        ("spine_01", "Spine"),
        ("spine_02", "Spine1"),
        ("spine_03", "Spine2"),
        ("neck", "Neck"),
        ("head", "Head"),
        ("clavicle_l", "LeftShoulder"),
        ("upperarm_l", "LeftArm"),
        ("lowerarm_l", "LeftForeArm"),
        ("hand_l", "LeftHand"),
        ("clavicle_r", "RightShoulder"),
        ("upperarm_r", "RightArm"),
        ("lowerarm_r", "RightForeArm"),
        ("hand_r", "RightHand"),
        ("thigh_l", "LeftUpLeg"),
        ("calf_l", "LeftLeg"),
        ("foot_l", "LeftFoot"),
        ("ball_l", "LeftToeBase"),
        ("thigh_r", "RightUpLeg"),
        ("calf_r", "RightLeg"),
        ("foot_r", "RightFoot"),
        ("ball_r", "RightToeBase"),
    ];
    let in_leg = |j: usize| {
        ["thigh_l", "thigh_r"]
            .iter()
            .any(|n| m.is_descendant(j, m.joint_index(n).unwrap()))
    };
    let in_arm = |j: usize| {
        ["upperarm_l", "upperarm_r"]
            .iter()
            .any(|n| m.is_descendant(j, m.joint_index(n).unwrap()))
    };
    let joints = (0..m.joint_count())
        .map(|j| {
            let name = &m.joint_names()[j];
            let renamed = mixamo
                .iter()
                .find(|(a, _)| a == name)
                .map_or_else(|| format!("mixamorig:x_{name}"), |(_, b)| format!("mixamorig:{b}"));
            let mut rest = m.rest_pose()[j];
            let k = if in_leg(j) && !name.starts_with("thigh") {
                legs
            } else if in_arm(j) && !name.starts_with("upperarm") {
                0.9
            } else {
                1.05
            };
            rest.translation *= k;
            if name == "upperarm_l" {
                rest.rotation = Quat::from_rotation_z(raise);
            } else if name == "upperarm_r" {
                rest.rotation = Quat::from_rotation_z(-raise);
            }
            (renamed, m.parents()[j].map(|p| p as usize), rest)
        })
        .collect();
    Skeleton::from_rest_pose("mannequin variant", joints).expect("the variant is a skeleton")
}

/// The angle between two rotations, in radians (exact near 0, unlike an arc cosine).
pub fn quat_angle(a: glam::DQuat, b: glam::DQuat) -> f64 {
    let d = a.inverse() * b;
    2.0 * d.xyz().length().atan2(d.w.abs())
}

/// Every key time of a clip's rotation tracks, sorted, once each.
pub fn key_times(clip: &Clip) -> Vec<f32> {
    let mut t: Vec<f32> = clip
        .tracks
        .iter()
        .flat_map(|k| k.rotation.iter().flat_map(|r| r.times.iter().copied()))
        .collect();
    t.sort_by(f32::total_cmp);
    t.dedup();
    t
}
