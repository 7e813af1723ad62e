//! Inverse kinematics on the GPU: the `ik` stage against its CPU mirror (`cpu::ik`) on the GPU's
//! own propagated poses, the fused path against the staged one, both against the f64 reference
//! (`reference::apply_chain`), ozz-animation's reach under scaled and mirrored parents, ground
//! goals on a user's ground function, and bad input. (The solvers alone, with ozz's own cases:
//! `tests/ik_solve.rs`.)
//!
//! Tolerances: the GPU against the mirror 1e-3 × (1 + |value|): the same operations, but the law
//! of cosines' acos near ±1 (a nearly straight chain) turns a last-bit difference of a cosine
//! into up to ~1e-4 rad and more (measured: 4.3e-4), and lavapipe's acos and inverseSqrt are not
//! Rust's. Against the f64 reference, 2e-3 × (1 + |value|).

mod common;

use glam::{DMat4, DVec3, Mat4, Quat, Vec2, Vec3};
use rand::Rng;
use rand::rngs::SmallRng;
use wgpu_anim::ik::{AimIk, IkChain, IkGoal, IkKind, IkTarget, TwoBoneIk};
use wgpu_anim::layout::{GpuFrame, GpuOutput};
use wgpu_anim::math::{Affine, Transform};
use wgpu_anim::shaders::{Resource, Stage};
use wgpu_anim::{AnimationLibrary, Animator, AnimatorDesc, InstanceDesc, LibraryBuilder, Skeleton, cpu};

/// The ground of the ground goals, in WGSL and its Rust twin.
const GROUND: &str = "fn ground_height(p: vec2<f32>) -> f32 {\n    return 0.1 * sin(p.x) + 0.05 * cos(0.7 * p.y);\n}\n";

fn ground(p: Vec2) -> f32 {
    0.1 * p.x.sin() + 0.05 * (0.7 * p.y).cos()
}

fn parent(s: &Skeleton, j: usize) -> Option<usize> {
    s.parents()[j].map(|p| p as usize)
}

/// A random skeleton with IK chains on its own joints: two two-bone chains (one whose start is
/// the mid's grandparent: not parent and child) with a pelvis, and an aim chain of three joints.
fn rigged_skeleton(r: &mut SmallRng, name: &str, n: usize) -> Skeleton {
    let mut s = common::random_skeleton(r, name, n);
    let depth = s.depths();
    let deep: Vec<usize> = (0..n).filter(|&j| depth[j] >= 4).collect();
    assert!(deep.len() >= 3, "{name}: a skeleton deep enough for chains");
    let (e1, e2, a) = (deep[deep.len() - 1], deep[deep.len() / 2], deep[0]);
    let mut two_bone = |end: usize, skip: bool, pelvis: bool| {
        let mid = parent(&s, end).unwrap();
        let mut start = parent(&s, mid).unwrap();
        if skip {
            start = parent(&s, start).unwrap();
        }
        let pelvis = pelvis.then(|| parent(&s, start)).flatten();
        IkKind::TwoBone(TwoBoneIk {
            start,
            mid,
            end,
            mid_axis: Vec3::new(r.gen_range(-1.0..1.0), r.gen_range(-1.0..1.0), 1.0),
            pole: Vec3::new(r.gen_range(-1.0..1.0), 0.2, 1.0),
            twist: r.gen_range(-0.5..0.5),
            soften: r.gen_range(0.8..1.0),
            pelvis,
        })
    };
    let kinds = [two_bone(e1, false, true), two_bone(e2, true, false)];
    for (k, kind) in kinds.into_iter().enumerate() {
        // The second leg shares the first one's pelvis, or names none.
        let kind = match kind {
            IkKind::TwoBone(mut t) if k == 1 => {
                t.pelvis = s.ik_chains().first().and_then(|c| match &c.kind {
                    IkKind::TwoBone(f) => f.pelvis.filter(|&p| s.is_descendant(t.start, p)),
                    IkKind::Aim(_) => None,
                });
                IkKind::TwoBone(t)
            }
            other => other,
        };
        s.add_ik_chain(IkChain {
            name: format!("leg{k}"),
            kind,
        })
        .unwrap();
    }
    let a1 = parent(&s, a).unwrap();
    let a2 = parent(&s, a1).unwrap();
    s.add_ik_chain(IkChain {
        name: "look".into(),
        kind: IkKind::Aim(AimIk {
            joints: vec![a, a1, a2],
            forward: Vec3::Z,
            offset: Vec3::new(0.0, 0.05, 0.1),
            up: Vec3::Y,
            pole: Vec3::Y,
            twist: 0.0,
            joint_weight: 0.5,
        }),
    })
    .unwrap();
    s
}

/// Two rigged skeletons of 30 and 60 joints with random clips.
fn library() -> (AnimationLibrary, Vec<Skeleton>, Vec<wgpu_anim::Clip>) {
    let mut r = common::rng(41);
    let mut b = LibraryBuilder::new();
    let mut skeletons = Vec::new();
    let mut clips = Vec::new();
    for (k, n) in [30, 60].into_iter().enumerate() {
        let s = rigged_skeleton(&mut r, &format!("rig{k}"), n);
        let id = b.add_skeleton(s.clone());
        for c in 0..3 {
            let clip = common::random_clip(&mut r, &s, &format!("rig{k}_clip{c}"));
            b.add_clip(id, &clip).unwrap();
            clips.push(clip);
        }
        skeletons.push(s);
    }
    (b.build(), skeletons, clips)
}

/// One of skeleton `skeleton`'s three clips at a random time and rate.
fn state(r: &mut SmallRng, lib: &AnimationLibrary, skeleton: u32) -> InstanceDesc {
    let clip = lib.clip_at(skeleton * 3 + r.gen_range(0..3)).unwrap();
    InstanceDesc::new(clip)
        .with_time(r.gen_range(0.0..2.0))
        .with_rate(r.gen_range(0.5..1.5))
}

fn world(r: &mut SmallRng) -> Mat4 {
    Mat4::from_scale_rotation_translation(
        Vec3::splat(r.gen_range(0.5..2.0)),
        Quat::from_rotation_y(r.gen_range(-3.0..3.0)),
        Vec3::new(r.gen_range(-5.0..5.0), r.gen_range(-1.0..1.0), r.gen_range(-5.0..5.0)),
    )
}

/// A random goal for chain `k` (0 and 1 two-bone, 2 aim), or none.
fn goal(r: &mut SmallRng, k: usize) -> Option<IkGoal> {
    let point = Vec3::new(r.gen_range(-1.0..1.0), r.gen_range(-0.5..1.5), r.gen_range(-1.0..1.0));
    let target = match r.gen_range(0..5) {
        0 => return None,
        1 => IkTarget::Model(point),
        2 => IkTarget::World(point * 3.0),
        3 => IkTarget::LookAt,
        _ if k < 2 => IkTarget::Ground,
        _ => IkTarget::Model(point),
    };
    let weight = [0.0, 0.5, 1.0, 1.0, 1.0][r.gen_range(0..5)];
    Some(IkGoal { target, weight })
}

/// `n` characters with random clips, worlds and goals on their chains.
fn crowd(device: &wgpu::Device, lib: &AnimationLibrary, n: usize, fused: bool) -> Animator {
    let desc = AnimatorDesc::default()
        .with_max_instances(n as u32)
        .with_page_instances(Some(40))
        .with_ground(Some(GROUND));
    let mut a = Animator::new(device, lib, &desc).unwrap();
    let mut r = common::rng(12);
    for i in 0..n {
        let at = world(&mut r); // drawn before the state, as it was
        let desc = state(&mut r, lib, (i % 2) as u32).with_world(at);
        a.controller_mut().add_instance(&desc).unwrap();
        for k in 0..3 {
            a.controller_mut().set_ik_goal(i, k, goal(&mut r, k)).unwrap();
        }
    }
    a.controller_mut().set_look_at(Vec3::new(1.0, 2.0, -3.0)).unwrap();
    a.set_fused(fused).unwrap();
    a
}

fn step(device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator, dt: f32) {
    a.prepare(queue, dt);
    let mut encoder = device.create_command_encoder(&Default::default());
    a.encode(&mut encoder).unwrap();
    queue.submit([encoder.finish()]);
}

fn relative(got: &Affine, want: &Affine) -> f32 {
    common::affine_error(got, want) / (1.0 + want.x.abs().max(want.y.abs()).max(want.z.abs()).max_element())
}

/// Page `page`'s model poses in use.
fn models(device: &wgpu::Device, queue: &wgpu::Queue, a: &Animator, page: usize) -> Vec<Affine> {
    let joints = u64::from(a.controller().page_joint_count(page));
    a.read_page_buffer(device, queue, page, Resource::ModelPoses, 0, joints)
        .unwrap()
}

/// The mirror's `ik` stage on page `page`'s model poses `pre`.
fn mirror_ik(a: &Animator, page: usize, pre: &[Affine]) -> Vec<Affine> {
    let instances = a.controller().page_instances(page);
    let capacity = a.controller().page_max_joints(page);
    let frame = GpuFrame {
        instance_count: instances.len() as u32,
        snapshot_offset: capacity,
        look_at: a.controller().look_at().extend(0.0),
        ..Default::default()
    };
    let mut model = pre.to_vec();
    let mut insts = instances.to_vec();
    let mut page_buffers = cpu::PageBuffers::new(&frame, &mut insts)
        .model_poses(&mut model)
        .ground(&ground);
    cpu::ik(a.controller().library(), &mut page_buffers).unwrap();
    model
}

/// 120 characters over three pages, four frames on the staged path: before the `ik` pass the GPU's
/// model poses are read back, the mirror's `ik` stage runs on them, and the GPU's after the pass
/// must agree joint by joint; joints without a goal above them are untouched. The comparison
/// fails against the poses before IK.
#[test]
fn the_ik_stage_on_the_gpu_matches_the_mirror() {
    let (device, queue) = common::device();
    let (lib, _, _) = library();
    let n = 120;
    let mut a = crowd(&device, &lib, n, false);
    assert_eq!(a.dispatches_per_frame(), 5 * 3, "the ik pass runs on each page");
    let (mut worst, mut moved) = (0.0f32, 0usize);
    for dt in [0.0, 0.3, 0.05, 0.4] {
        a.prepare(&queue, dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        for stage in [Stage::Clock, Stage::Sample, Stage::LocalToModel] {
            a.encode_stage(&mut encoder, stage).unwrap();
        }
        queue.submit([encoder.finish()]);
        let pre: Vec<Vec<Affine>> = (0..a.controller().pages_in_use())
            .map(|p| models(&device, &queue, &a, p))
            .collect();
        let mut encoder = device.create_command_encoder(&Default::default());
        a.encode_stage(&mut encoder, Stage::Ik).unwrap();
        queue.submit([encoder.finish()]);
        for (page, pre) in pre.iter().enumerate() {
            let gpu = models(&device, &queue, &a, page);
            let want = mirror_ik(&a, page, pre);
            worst = worst.max(
                common::compare("ik model pose", &gpu, &want, 1e-3, relative)
                    .unwrap_or_else(|e| panic!("page {page}: {e}")),
            );
            let here = gpu.iter().zip(pre).filter(|(g, p)| relative(g, p) > 1e-3).count();
            moved += here;
            if here > 0 {
                assert!(common::compare("ik model pose", &gpu, pre, 1e-3, relative).is_err());
            }
        }
    }
    assert!(moved > 1000, "IK moved {moved} joints");
    eprintln!("ik stage: GPU against the mirror, worst {worst:e} relative");
}

/// The same crowd on the fused path draws the staged path's palettes, and both are within 2e-3 of
/// the f64 reference applied to the mirror's propagated pose.
#[test]
fn the_fused_path_and_the_f64_reference_agree_with_the_staged_path() {
    let (device, queue) = common::device();
    let (lib, skeletons, _) = library();
    let n = 80;
    let mut staged = crowd(&device, &lib, n, false);
    let mut fused = crowd(&device, &lib, n, true);
    for dt in [0.0, 0.2, 0.35] {
        step(&device, &queue, &mut staged, dt);
        step(&device, &queue, &mut fused, dt);
    }
    let mut worst_ref = 0.0f64;
    let pages = staged.controller().pages_in_use();
    let mut posed = Vec::new();
    for page in 0..pages {
        let (_, sp) = staged.read_back_page(&device, &queue, page).unwrap();
        let (_, fp) = fused.read_back_page(&device, &queue, page).unwrap();
        common::compare("fused palette", &fp.palette, &sp.palette, 1e-4, relative).unwrap();
        posed.push(sp);
    }
    // The f64 reference, from the GPU's own pose before IK: the staged local_to_model pass
    // again (its input, the local poses, IK leaves alone).
    let mut encoder = device.create_command_encoder(&Default::default());
    staged.encode_stage(&mut encoder, Stage::LocalToModel).unwrap();
    queue.submit([encoder.finish()]);
    for (page, sp) in posed.iter().enumerate() {
        let pre = models(&device, &queue, &staged, page);
        for inst in staged.controller().page_instances(page) {
            let s = &skeletons[inst.skeleton as usize];
            let o = inst.joint_offset as usize;
            let mut model: Vec<DMat4> = pre[o..o + s.joint_count()]
                .iter()
                .map(|m| m.to_mat4().as_dmat4())
                .collect();
            reference_ik(s, inst, staged.controller().look_at(), &mut model);
            for (j, m) in model.iter().enumerate() {
                let got = sp.model[o + j].to_mat4().as_dmat4();
                let scale = 1.0 + m.abs().to_cols_array().iter().fold(0.0f64, |a, b| a.max(*b));
                let e = (got - *m).abs().to_cols_array().iter().fold(0.0f64, |a, b| a.max(*b)) / scale;
                worst_ref = worst_ref.max(e);
                assert!(
                    e < 2e-3,
                    "page {page}, skeleton {}, joint {j}: GPU {got:?}, reference {m:?}",
                    s.name()
                );
            }
        }
    }
    eprintln!("ik: GPU against the f64 reference, worst {worst_ref:e} relative");
}

/// The f64 reference of one character's IK: its ground goals' targets and pelvis, then each chain.
fn reference_ik(s: &Skeleton, inst: &wgpu_anim::layout::GpuInstance, look_at: Vec3, model: &mut [DMat4]) {
    let world = inst.world.to_mat4().as_dmat4();
    let world_inv = world.inverse();
    let kind = |k: usize| (inst.ik >> (8 + 2 * k)) & 3;
    let on = |k: usize| inst.ik & (1 << k) != 0;
    let mut ground_targets = [DVec3::ZERO; 4];
    let floor = world.w_axis.y;
    let root_rise = f64::from(ground(Vec2::new(world.w_axis.x as f32, world.w_axis.z as f32))) - floor;
    let (mut strongest, mut lowest, mut pelvis) = (0.0f64, 0.0f64, None);
    for (k, c) in s.ik_chains().iter().enumerate() {
        if let (true, 3, IkKind::TwoBone(t)) = (on(k), kind(k), &c.kind) {
            let end = world.transform_point3(model[t.end].w_axis.truncate());
            let rise = f64::from(ground(Vec2::new(end.x as f32, end.z as f32))) - floor;
            ground_targets[k] = model[t.end].w_axis.truncate() + world_inv.transform_vector3(DVec3::Y * rise);
            let weight = f64::from(inst.ik_goals[k].w);
            strongest = strongest.max(weight);
            lowest = lowest.min((rise - root_rise) * weight);
            pelvis = t.pelvis.or(pelvis);
        }
    }
    // Every joint lifted onto the ground under the root, the pelvis down to the lowest foot.
    let lift = DMat4::from_translation(world_inv.transform_vector3(DVec3::Y * root_rise * strongest));
    for m in model.iter_mut() {
        *m = lift * *m;
    }
    if let Some(p) = pelvis.filter(|_| lowest < 0.0) {
        let shift = DMat4::from_translation(world_inv.transform_vector3(DVec3::Y * lowest));
        for (j, m) in model.iter_mut().enumerate().skip(p) {
            if s.is_descendant(j, p) {
                *m = shift * *m;
            }
        }
    }
    for (k, ground_target) in ground_targets.iter().enumerate().take(s.ik_chains().len()) {
        if !on(k) {
            continue;
        }
        let g = inst.ik_goals[k];
        let target = match kind(k) {
            0 => g.truncate().as_dvec3(),
            1 => world_inv.transform_point3(g.truncate().as_dvec3()),
            2 => world_inv.transform_point3(look_at.as_dvec3()),
            _ => *ground_target,
        };
        wgpu_anim::reference::apply_chain(s, model, k, target, f64::from(g.w));
    }
}

/// ozz-animation's two-bone chain (start at the origin, mid one up and turned a quarter about Z,
/// end one along X from it) under each of ozz's parents (identity, translated, rotated, uniformly
/// and non-uniformly scaled, mirrored) on the GPU: reachable targets are reached within 1e-2
/// (ozz's tolerance), poles along ±X and ±Z, soften and weight 0, 0.5 and 1 as the mirror; an
/// unreachable target, a target at the start and a pole along the target give a finite pose.
#[test]
fn ozz_chains_under_scaled_and_mirrored_parents_reach_on_the_gpu() {
    let parents = [
        Transform::default(),
        Transform::from_translation(Vec3::Y),
        Transform::new(
            Vec3::ZERO,
            Quat::from_euler(glam::EulerRot::YXZ, 0.5, 0.3, -0.2),
            Vec3::ONE,
        ),
        Transform::new(Vec3::ZERO, Quat::IDENTITY, Vec3::splat(2.0)),
        Transform::new(Vec3::ZERO, Quat::IDENTITY, Vec3::new(1.0, 2.0, 1.0)),
        Transform::new(Vec3::ZERO, Quat::IDENTITY, Vec3::new(-1.0, 1.0, 1.0)),
    ];
    let mut b = LibraryBuilder::new();
    let mut skeletons = Vec::new();
    for (k, p) in parents.iter().enumerate() {
        let joints = vec![
            ("parent".to_string(), None, *p),
            ("start".to_string(), Some(0), Transform::default()),
            (
                "mid".to_string(),
                Some(1),
                Transform::new(Vec3::Y, Quat::from_rotation_z(std::f32::consts::FRAC_PI_2), Vec3::ONE),
            ),
            ("end".to_string(), Some(2), Transform::from_translation(Vec3::Y)),
        ];
        let mut s = Skeleton::from_rest_pose(format!("ozz{k}"), joints).unwrap();
        s.add_ik_chain(IkChain {
            name: "chain".into(),
            kind: IkKind::TwoBone(TwoBoneIk {
                start: 1,
                mid: 2,
                end: 3,
                mid_axis: Vec3::Z,
                pole: Vec3::Y,
                twist: 0.0,
                soften: 1.0,
                pelvis: None,
            }),
        })
        .unwrap();
        let id = b.add_skeleton(s.clone());
        let rest = wgpu_anim::Clip {
            name: format!("rest{k}"),
            duration: 1.0,
            looping: true,
            tracks: vec![],
            events: vec![],
            curves: vec![],
            morph_weights: vec![],
        };
        b.add_clip(id, &rest).unwrap();
        skeletons.push(s);
    }
    let lib = b.build();
    // (target in the chain's frame, reachable): ozz's targets, one beyond reach, one at the
    // start; each with the weights 1, 0.5 and 0.
    let targets = [
        (Vec3::new(1.0, 1.0, 0.0), true),
        (Vec3::new(0.0, 1.0, 1.0), true),
        (Vec3::new(0.0, 1.0, -1.0), true),
        (Vec3::new(0.0, 1.8, 0.3), true),
        (Vec3::new(3.0, 0.0, 0.0), false),
        (Vec3::ZERO, false),
    ];
    let (device, queue) = common::device();
    let n = parents.len() * targets.len() * 3;
    let desc = AnimatorDesc::default().with_max_instances(n as u32);
    for fused in [false, true] {
        let mut a = Animator::new(&device, &lib, &desc).unwrap();
        a.set_fused(fused).unwrap();
        let mut cases = Vec::new();
        for (k, p) in parents.iter().enumerate() {
            let parent = p.to_mat4();
            for &(t, reach) in &targets {
                for weight in [1.0, 0.5, 0.0] {
                    let i = a
                        .controller_mut()
                        .add_instance(&InstanceDesc::new(lib.clip_at(k as u32).unwrap()))
                        .unwrap();
                    let target = parent.transform_point3(t);
                    a.controller_mut()
                        .set_ik_goal(
                            i,
                            0,
                            Some(IkGoal {
                                target: IkTarget::Model(target),
                                weight,
                            }),
                        )
                        .unwrap();
                    cases.push((i, k, target, reach, weight));
                }
            }
        }
        step(&device, &queue, &mut a, 0.0);
        let (_, pose) = a.read_back(&device, &queue).unwrap();
        // Which chains reached their targets: the outputs, after the clocks in the state buffer.
        let first_output =
            wgpu_anim::layout::outputs_offset(a.controller().page_capacity(0)) / size_of::<GpuOutput>() as u64;
        let outputs: Vec<GpuOutput> = a
            .read_page_buffer(
                &device,
                &queue,
                0,
                Resource::CharacterState,
                first_output,
                cases.len() as u64,
            )
            .unwrap();
        for &(i, k, target, reach, weight) in &cases {
            assert_eq!(
                outputs[i].ik_reached,
                u32::from(reach && weight == 1.0),
                "fused {fused}, parent {k}, target {target}, weight {weight}: reached"
            );
            let o = a.controller().instances()[i].joint_offset as usize;
            for m in &pose.palette[o..o + 4] {
                assert!(
                    m.x.is_finite() && m.y.is_finite() && m.z.is_finite(),
                    "instance {i}: {m:?}"
                );
            }
            let rest = skeletons[k].rest_model_matrices();
            let end = pose.palette[o + 3].to_mat4() * rest[3];
            let miss = (end.w_axis.truncate() - target).length();
            if weight == 1.0 && reach {
                assert!(
                    miss < 1e-2,
                    "fused {fused}, parent {k}, target {target}: the end misses by {miss}"
                );
            }
            if weight == 0.0 {
                let unmoved = (end.w_axis.truncate() - rest[3].w_axis.truncate()).length();
                assert!(unmoved < 1e-5, "weight 0 moves the end by {unmoved}");
            }
        }
        // A goal taken away: the chain no longer counts as reached.
        let (first, ..) = cases[0];
        assert_eq!(outputs[first].ik_reached, 1);
        a.controller_mut().set_ik_goal(first, 0, None).unwrap();
        step(&device, &queue, &mut a, 0.0);
        let after: Vec<GpuOutput> = a
            .read_page_buffer(&device, &queue, 0, Resource::CharacterState, first_output, 1)
            .unwrap();
        assert_eq!(
            after[0].ik_reached, 0,
            "fused {fused}: reached after its goal was taken away"
        );
    }
}

/// The walk on relief: mannequins walking in place on the crowd demo's hills (`scene::RELIEF`),
/// half standing at the ground's height under their root, half at 0; each ankle's height above
/// the ground under it against its height above the floor in the clip (what it should be on any
/// ground). Without IK the feet sink
/// into slopes and float over hollows; with ground goals on both legs (and the pelvis lowered to
/// the lower foot) they follow the ground, their toes pointing where they did. The run is
/// printed; IK must take the worst error below a quarter of what it was and below 2 cm.
#[test]
fn feet_follow_the_ground_over_a_walk() {
    let (device, queue) = common::device();
    let mut skeleton = wgpu_anim::mannequin::skeleton();
    let [leg_l, leg_r, _] = wgpu_anim::mannequin::add_ik(&mut skeleton).unwrap();
    let (lib, _, clips) = wgpu_anim::mannequin::library_of(skeleton.clone());
    let walk = clips[1];
    // The crowd demo's hills, in WGSL for the GPU and in Rust for the measure: this also checks
    // that the two are the same function.
    let relief = wgpu_anim::scene::RELIEF;
    let height = wgpu_anim::scene::relief_height;
    let n = 24;
    let desc = AnimatorDesc::default()
        .with_max_instances(n as u32)
        .with_ground(Some(relief));
    let feet = [
        skeleton.joint_index("foot_l").unwrap(),
        skeleton.joint_index("foot_r").unwrap(),
    ];
    let (mut runs, mut toes) = (Vec::new(), Vec::new());
    for ik in [false, true] {
        let mut a = Animator::new(&device, &lib, &desc).unwrap();
        let mut r = common::rng(8);
        for i in 0..n {
            let (x, z) = (r.gen_range(-6.0..6.0), r.gen_range(-6.0..6.0));
            // Half stand at the ground's height, half at 0 (as root motion keeps them): the
            // ground goals lift those onto the ground under their root.
            let y = if i % 2 == 0 { height(Vec2::new(x, z)) } else { 0.0 };
            let world =
                Mat4::from_rotation_translation(Quat::from_rotation_y(r.gen_range(-3.0..3.0)), Vec3::new(x, y, z));
            a.controller_mut()
                .add_instance(
                    &InstanceDesc::new(walk)
                        .with_world(world)
                        .with_time(r.gen_range(0.0..1.0)),
                )
                .unwrap();
            if ik {
                for chain in [leg_l, leg_r] {
                    let goal = IkGoal {
                        target: IkTarget::Ground,
                        weight: 1.0,
                    };
                    a.controller_mut().set_ik_goal(i, chain, Some(goal)).unwrap();
                }
            }
        }
        // 40 frames at 30 per second: more than a stride.
        let (mut errors, mut forward) = (Vec::new(), Vec::new());
        for _ in 0..40 {
            step(&device, &queue, &mut a, 1.0 / 30.0);
            let (_, pose) = a.read_back(&device, &queue).unwrap();
            for inst in a.controller().instances() {
                let world = inst.world.to_mat4();
                for &f in &feet {
                    let foot = world * pose.model[inst.joint_offset as usize + f].to_mat4();
                    let ankle = foot.w_axis.truncate();
                    assert!(ankle.is_finite());
                    errors.push((ankle.y, height(Vec2::new(ankle.x, ankle.z)), world.w_axis.y));
                    // Where the toes point (the foot's +Z).
                    forward.push(foot.z_axis.truncate().normalize());
                }
            }
        }
        runs.push(errors);
        toes.push(forward);
    }
    // The clip's own ankle height above the floor, from the run without IK (where the ankle is
    // where the clip puts it); the error of each run against it.
    let error = |run: &[(f32, f32, f32)]| -> (f32, f32, f32) {
        let (mut sink, mut float, mut sum) = (0.0f32, 0.0f32, 0.0f32);
        for ((y, ground, _), (y0, _, floor)) in run.iter().zip(&runs[0]) {
            let e = (y - ground) - (y0 - floor);
            sink = sink.max(-e);
            float = float.max(e);
            sum += e.abs();
        }
        (sink, float, sum / run.len() as f32)
    };
    let (before, after) = (error(&runs[0]), error(&runs[1]));
    eprintln!(
        "ankle height error over the walk on relief: without IK {:.1} mm deepest, {:.1} mm highest, \
         {:.1} mm mean; with ground IK {:.1} mm, {:.1} mm, {:.1} mm",
        before.0 * 1e3,
        before.1 * 1e3,
        before.2 * 1e3,
        after.0 * 1e3,
        after.1 * 1e3,
        after.2 * 1e3
    );
    // The feet keep their way: planted, not turned about the leg (a knee bent the wrong way and
    // the leg twisted back round would point the toes backward).
    let turned = toes[0]
        .iter()
        .zip(&toes[1])
        .map(|(a, b)| a.angle_between(*b))
        .fold(0.0f32, f32::max);
    eprintln!("feet turned by IK: at most {:.1}°", turned.to_degrees());
    assert!(turned < 0.7, "IK turns a foot by {:.1}°", turned.to_degrees());
    let (worst_before, worst_after) = (before.0.max(before.1), after.0.max(after.1));
    assert!(
        worst_before > 0.05,
        "the relief moves the ground under the feet: {worst_before}"
    );
    assert!(
        worst_after < 0.25 * worst_before && worst_after < 0.02,
        "with IK the ankles are off by up to {worst_after} m (without: {worst_before} m)"
    );
}

/// Ground goals on a random rig agree with the mirror and lower the pelvis.
#[test]
fn ground_goals_on_random_rigs_match_the_mirror() {
    let (device, queue) = common::device();
    let (lib, _, _) = library();
    let n = 40;
    let desc = AnimatorDesc::default()
        .with_max_instances(n as u32)
        .with_ground(Some(GROUND));
    let mut a = Animator::new(&device, &lib, &desc).unwrap();
    let mut r = common::rng(5);
    for i in 0..n {
        let at = world(&mut r); // drawn before the state, as it was
        a.controller_mut()
            .add_instance(&state(&mut r, &lib, (i % 2) as u32).with_world(at))
            .unwrap();
        for k in 0..2 {
            a.controller_mut()
                .set_ik_goal(
                    i,
                    k,
                    Some(IkGoal {
                        target: IkTarget::Ground,
                        weight: 1.0,
                    }),
                )
                .unwrap();
        }
    }
    a.prepare(&queue, 0.1);
    let mut encoder = device.create_command_encoder(&Default::default());
    for stage in [Stage::Clock, Stage::Sample, Stage::LocalToModel] {
        a.encode_stage(&mut encoder, stage).unwrap();
    }
    queue.submit([encoder.finish()]);
    let pre = models(&device, &queue, &a, 0);
    let mut encoder = device.create_command_encoder(&Default::default());
    a.encode_stage(&mut encoder, Stage::Ik).unwrap();
    queue.submit([encoder.finish()]);
    let post = models(&device, &queue, &a, 0);
    common::compare("ground ik", &post, &mirror_ik(&a, 0, &pre), 1e-3, relative).unwrap();
    assert!(post.iter().zip(&pre).filter(|(g, p)| relative(g, p) > 1e-3).count() > 100);
}

/// Bad input: errors at the API naming the skeleton or instance and the chain, nothing changed.
#[test]
fn bad_chains_and_goals_are_refused_with_what_is_wrong() {
    let mut s = common::random_skeleton(&mut common::rng(3), "s", 8);
    let leg = |start, mid, end| IkChain {
        name: "leg".into(),
        kind: IkKind::TwoBone(TwoBoneIk {
            start,
            mid,
            end,
            mid_axis: Vec3::Z,
            pole: Vec3::Z,
            twist: 0.0,
            soften: 1.0,
            pelvis: None,
        }),
    };
    // Joints of the random skeleton: find a chain and a pair that is not one.
    let end = (0..8).rev().find(|&j| s.depths()[j] >= 2).unwrap();
    let mid = parent(&s, end).unwrap();
    let start = parent(&s, mid).unwrap();
    let e = s.add_ik_chain(leg(end, mid, start)).unwrap_err().to_string();
    assert!(
        e.contains("not a chain") && e.contains("'leg'") && e.contains("skeleton 's'"),
        "{e}"
    );
    let e = s.add_ik_chain(leg(start, mid, 99)).unwrap_err().to_string();
    assert!(e.contains("does not exist"), "{e}");
    let mut bad_axis = leg(start, mid, end);
    if let IkKind::TwoBone(t) = &mut bad_axis.kind {
        t.mid_axis = Vec3::new(f32::NAN, 0.0, 0.0);
    }
    assert!(s.add_ik_chain(bad_axis).unwrap_err().to_string().contains("mid axis"));
    assert!(s.ik_chains().is_empty(), "nothing added");
    assert_eq!(s.add_ik_chain(leg(start, mid, end)).unwrap(), 0);
    assert!(
        s.add_ik_chain(leg(start, mid, end))
            .unwrap_err()
            .to_string()
            .contains("name of its own")
    );
    // A zero-length bone in the rest pose.
    let joints = vec![
        ("a".to_string(), None, Transform::default()),
        ("b".to_string(), Some(0), Transform::default()),
        ("c".to_string(), Some(1), Transform::from_translation(Vec3::Y)),
    ];
    let mut z = Skeleton::from_rest_pose("zero", joints).unwrap();
    let e = z.add_ik_chain(leg(0, 1, 2)).unwrap_err().to_string();
    assert!(e.contains("zero length"), "{e}");

    let (lib, _, _) = library();
    let (device, queue) = common::device();
    let mut a = Animator::new(&device, &lib, &AnimatorDesc::default()).unwrap();
    let mut r = common::rng(1);
    a.controller_mut().add_instance(&state(&mut r, &lib, 0)).unwrap();
    let nan = IkGoal {
        target: IkTarget::Model(Vec3::new(f32::NAN, 0.0, 0.0)),
        weight: 1.0,
    };
    let ok = IkGoal {
        target: IkTarget::Model(Vec3::ONE),
        weight: 1.0,
    };
    let cases = [
        (0, 0, nan, "must be finite"),
        (
            0,
            0,
            IkGoal {
                target: IkTarget::World(Vec3::splat(f32::INFINITY)),
                weight: 1.0,
            },
            "must be finite",
        ),
        (0, 0, IkGoal { weight: 1.5, ..ok }, "outside [0, 1]"),
        (0, 0, IkGoal { weight: f32::NAN, ..ok }, "outside [0, 1]"),
        (
            0,
            2,
            IkGoal {
                target: IkTarget::Ground,
                weight: 1.0,
            },
            "only a two-bone chain",
        ),
        (0, 3, ok, "does not exist"),
        (1, 0, ok, "does not exist"),
    ];
    let controller = a.controller_mut();
    for (i, k, g, what) in cases {
        let e = controller.set_ik_goal(i, k, Some(g)).unwrap_err().to_string();
        assert!(e.contains(what) && e.contains(&format!("instance {i}")), "{e}");
        assert_eq!(controller.ik_goal(0, k), None, "nothing set");
    }
    assert!(controller.set_look_at(Vec3::new(0.0, f32::NAN, 0.0)).is_err());
    controller.set_ik_goal(0, 0, Some(ok)).unwrap();
    assert_eq!(controller.ik_goal(0, 0), Some(ok));
    controller.set_ik_goal(0, 0, None).unwrap();
    assert_eq!(controller.ik_goal(0, 0), None);
    // A ground function that returns NaN or infinity plants nothing: the pose stays finite.
    for bad in ["zero / zero", "1.0 / zero", "sqrt(-1.0 - p.x * p.x)"] {
        let source = format!("fn ground_height(p: vec2<f32>) -> f32 {{ let zero = p.x - p.x; return {bad} + zero; }}");
        let desc = AnimatorDesc::default().with_ground(Some(Box::leak(source.into_boxed_str())));
        let mut b = Animator::new(&device, &lib, &desc).unwrap();
        let mut r = common::rng(2);
        for i in 0..4 {
            b.controller_mut().add_instance(&state(&mut r, &lib, 0)).unwrap();
            for k in 0..2 {
                b.controller_mut()
                    .set_ik_goal(
                        i,
                        k,
                        Some(IkGoal {
                            target: IkTarget::Ground,
                            weight: 1.0,
                        }),
                    )
                    .unwrap();
            }
        }
        step(&device, &queue, &mut b, 0.1);
        let (_, pose) = b.read_back(&device, &queue).unwrap();
        assert!(
            pose.palette
                .iter()
                .all(|m| m.x.is_finite() && m.y.is_finite() && m.z.is_finite()),
            "ground {bad}: the palette is not finite"
        );
    }
    // A ground that does not compose is refused when the animator is made.
    let desc = AnimatorDesc::default().with_ground(Some("fn ground_height(p: vec2<f32>) -> f32 { return q; }"));
    let e = Animator::new(&device, &lib, &desc).err().unwrap().to_string();
    assert!(e.contains("AnimatorDesc::ground"), "{e}");
}
