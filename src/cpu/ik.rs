//! Mirror of `shaders/ik.wgsl`. The stage's entry point [`ik`] checks what the page holds, then
//! runs [`kernel`]; [`ik_joints`] is one workgroup's work, which the fused mirror calls too.

use super::PageBuffers;
use super::checks::{instance_count, joint_end, joints, pose_buffer};
use super::ik_solve::{affine_inverse, aim_ik, two_bone_ik};
use crate::error::Result;
use crate::ik::{AimJob, MAX_AIM_JOINTS, MAX_IK_CHAINS, TwoBoneJob};
use crate::layout::{GpuFrame, GpuIkChain, GpuInstance, IK_ON, NO_JOINT, WORKGROUP_SIZE, ik_kind, ik_target};
use crate::library::AnimationLibrary;
use crate::math::{Affine, quat_rotate};
use glam::{Quat, Vec2, Vec3, Vec4};

/// The ground's height at world `(x, z)`: the mirror of `AnimatorDesc::ground`'s WGSL.
pub type Ground<'a> = &'a dyn Fn(Vec2) -> f32;

/// Where the IK stage reads and writes model matrices: the model pose buffer (staged) or the
/// fused stage's workgroup memory. WGSL `ik_model_at`, `ik_set_model`.
pub(crate) trait ModelStore {
    fn ik_model_at(&self, joint_offset: u32, j: u32) -> Affine;
    fn ik_set_model(&mut self, joint_offset: u32, j: u32, m: Affine);
}

impl ModelStore for [Affine] {
    fn ik_model_at(&self, joint_offset: u32, j: u32) -> Affine {
        self[(joint_offset + j) as usize]
    }

    fn ik_set_model(&mut self, joint_offset: u32, j: u32, m: Affine) {
        self[(joint_offset + j) as usize] = m;
    }
}

/// The IK stage's workgroup memory (WGSL `wg_pivots`, `wg_pivot_joints`, `wg_ground`).
struct Pivots {
    pivots: [Affine; MAX_AIM_JOINTS],
    joints: [u32; MAX_AIM_JOINTS],
    ground: [Vec3; MAX_IK_CHAINS],
    lift: Vec3,
    /// WGSL `wg_reached`.
    reached: u32,
}

/// `m · R(q) · m⁻¹`, the identity where `m` has no inverse. WGSL `correction_pivot`.
fn correction_pivot(m: &Affine, q: Vec4) -> Affine {
    let inv = affine_inverse(m);
    if inv.x == Vec4::ZERO && inv.y == Vec4::ZERO && inv.z == Vec4::ZERO {
        return Affine::IDENTITY;
    }
    m.mul(&Affine::from_sqt(Vec3::ZERO, Quat::from_vec4(q), Vec3::ONE))
        .mul(&inv)
}

fn target_kind(ik: u32, k: usize) -> u32 {
    (ik >> (8 + 2 * k)) & 3
}

/// The chain's target in model space. WGSL `chain_target`.
fn chain_target(frame: &GpuFrame, inst: &GpuInstance, k: usize, kind: u32, world_inv: &Affine, wg: &Pivots) -> Vec3 {
    let goal = inst.ik_goals[k].truncate();
    match kind {
        ik_target::WORLD => world_inv.transform_point3(goal),
        ik_target::LOOK_AT => world_inv.transform_point3(frame.look_at.truncate()),
        ik_target::GROUND => wg.ground[k],
        _ => goal,
    }
}

/// `x`, or 0 where it is not finite. WGSL `finite_or_zero`.
fn finite_or_zero(x: f32) -> f32 {
    if x.abs() <= 3.4e38 { x } else { 0.0 }
}

/// Ground goals' targets, the lift of every joint and the pelvis pivot. WGSL `ground_step`.
fn ground_step(
    lib: &AnimationLibrary,
    inst: &GpuInstance,
    joint_count: u32,
    store: &(impl ModelStore + ?Sized),
    world_inv: &Affine,
    ground: Ground<'_>,
    wg: &mut Pivots,
) {
    wg.joints = [NO_JOINT; MAX_AIM_JOINTS];
    wg.lift = Vec3::ZERO;
    let world = inst.world;
    let floor = world.y.w;
    let root_rise = finite_or_zero(ground(Vec2::new(world.x.w, world.z.w)) - floor);
    let mut strongest = 0.0f32;
    let mut lowest = 0.0f32;
    let mut pelvis = NO_JOINT;
    for k in 0..MAX_IK_CHAINS {
        let chain = chain_at(lib, inst.skeleton, k);
        if inst.ik & (IK_ON << k) == 0
            || target_kind(inst.ik, k) != ik_target::GROUND
            || chain.kind != ik_kind::TWO_BONE
            || !chain_animated(&chain, joint_count)
        {
            continue;
        }
        let end_model = store
            .ik_model_at(inst.joint_offset, chain.joints[2])
            .transform_point3(Vec3::ZERO);
        let end = world.transform_point3(end_model);
        let rise = finite_or_zero(ground(Vec2::new(end.x, end.z)) - floor);
        wg.ground[k] = end_model + world_inv.transform_vector3(Vec3::new(0.0, rise, 0.0));
        let weight = inst.ik_goals[k].w;
        strongest = strongest.max(weight);
        lowest = lowest.min((rise - root_rise) * weight);
        if chain.pelvis != NO_JOINT {
            pelvis = chain.pelvis;
        }
    }
    wg.lift = world_inv.transform_vector3(Vec3::new(0.0, root_rise * strongest, 0.0));
    if pelvis != NO_JOINT && lowest < 0.0 {
        let t = world_inv.transform_vector3(Vec3::new(0.0, lowest, 0.0));
        wg.pivots[0] = Affine {
            x: Vec4::new(1.0, 0.0, 0.0, t.x),
            y: Vec4::new(0.0, 1.0, 0.0, t.y),
            z: Vec4::new(0.0, 0.0, 1.0, t.z),
        };
        wg.joints[0] = pelvis;
    }
}

/// Whether every joint the chain reads is among the `joint_count` animated. WGSL
/// `chain_animated`.
fn chain_animated(chain: &GpuIkChain, joint_count: u32) -> bool {
    match chain.kind {
        ik_kind::TWO_BONE => {
            chain.joints.to_array()[..3].iter().all(|&j| j < joint_count)
                && (chain.pelvis == NO_JOINT || chain.pelvis < joint_count)
        }
        ik_kind::AIM => {
            let n = (chain.joint_count as usize).min(MAX_AIM_JOINTS);
            n > 0 && chain.joints.to_array()[..n].iter().all(|&j| j < joint_count)
        }
        _ => false,
    }
}

fn chain_at(lib: &AnimationLibrary, skeleton: u32, k: usize) -> GpuIkChain {
    lib.gpu_ik_chains()[skeleton as usize * MAX_IK_CHAINS + k]
}

/// Chain `k`'s pivots. WGSL `chain_step`.
fn chain_step(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    inst: &GpuInstance,
    store: &(impl ModelStore + ?Sized),
    (k, joint_count): (usize, u32),
    world_inv: &Affine,
    wg: &mut Pivots,
) {
    wg.joints = [NO_JOINT; MAX_AIM_JOINTS];
    wg.lift = Vec3::ZERO;
    let chain = chain_at(lib, inst.skeleton, k);
    if !chain_animated(&chain, joint_count) {
        return;
    }
    let goal = inst.ik_goals[k];
    let target = chain_target(frame, inst, k, target_kind(inst.ik, k), world_inv, wg);
    let o = inst.joint_offset;
    if chain.kind == ik_kind::TWO_BONE {
        let start = store.ik_model_at(o, chain.joints[0]);
        let mid = store.ik_model_at(o, chain.joints[1]);
        let end = store.ik_model_at(o, chain.joints[2]);
        let c = two_bone_ik(&TwoBoneJob {
            start,
            mid,
            end,
            target,
            pole: chain.pole,
            mid_axis: chain.axis,
            twist: chain.twist,
            soften: chain.ratio,
            weight: goal.w,
        });
        wg.reached |= u32::from(c.reached) << k;
        wg.pivots[0] = correction_pivot(&mid, c.mid);
        wg.joints[0] = chain.joints[1];
        wg.pivots[1] = correction_pivot(&start, c.start);
        wg.joints[1] = chain.joints[0];
    } else if chain.kind == ik_kind::AIM {
        let (mut forward, mut offset, mut up) = (chain.axis, chain.offset, chain.up);
        let mut previous = Affine::IDENTITY;
        let mut turned = Vec4::W;
        let n = (chain.joint_count as usize).min(MAX_AIM_JOINTS);
        let mut reached = true;
        for p in 0..n {
            let j = chain.joints[p];
            let m = store.ik_model_at(o, j);
            if p > 0 {
                let inv = affine_inverse(&m);
                let f = inv.transform_vector3(previous.transform_vector3(quat_rotate(turned, forward)));
                let f2 = f.dot(f);
                forward = if f2 > 0.0 { f * (1.0 / f2.sqrt()) } else { Vec3::ZERO };
                offset = inv.transform_point3(previous.transform_point3(quat_rotate(turned, offset)));
                up = inv.transform_vector3(previous.transform_vector3(quat_rotate(turned, up)));
            }
            let share = if p + 1 == n { 1.0 } else { chain.ratio };
            let c = aim_ik(&AimJob {
                joint: m,
                target,
                forward,
                offset,
                up,
                pole: chain.pole,
                twist: chain.twist,
                weight: goal.w * share,
            });
            reached = reached && c.reached;
            wg.pivots[p] = correction_pivot(&m, c.rotation);
            wg.joints[p] = j;
            previous = m;
            turned = c.rotation;
        }
        wg.reached |= u32::from(reached) << k;
    }
}

/// Carries joints `lid`, `lid + WORKGROUP_SIZE`, ... by the lift, then by the pivots of the
/// joints above them. WGSL `carry_joints`.
fn carry_joints(
    lib: &AnimationLibrary,
    inst: &GpuInstance,
    store: &mut (impl ModelStore + ?Sized),
    lid: u32,
    joint_count: u32,
    wg: &Pivots,
) {
    let skel_joint_offset = lib.gpu_skeletons()[inst.skeleton as usize].joint_offset;
    let lowest = wg.joints.iter().copied().min().unwrap_or(NO_JOINT);
    let lifted = wg.lift != Vec3::ZERO;
    let mut j = lid;
    while j < joint_count {
        if j < lowest && !lifted {
            j += WORKGROUP_SIZE;
            continue;
        }
        let mut m = store.ik_model_at(inst.joint_offset, j);
        let mut moved = lifted;
        m.x.w += wg.lift.x;
        m.y.w += wg.lift.y;
        m.z.w += wg.lift.z;
        let mut below = [false; MAX_AIM_JOINTS];
        let mut a = j as i32;
        while lowest != NO_JOINT && a >= lowest as i32 {
            for (b, &pivot) in below.iter_mut().zip(&wg.joints) {
                if pivot == a as u32 {
                    *b = true;
                }
            }
            let parent = lib.parents()[(skel_joint_offset + a as u32) as usize];
            if parent >= a {
                break;
            }
            a = parent;
        }
        for (&b, pivot) in below.iter().zip(&wg.pivots) {
            if b {
                m = pivot.mul(&m);
                moved = true;
            }
        }
        if moved {
            store.ik_set_model(inst.joint_offset, j, m);
        }
        j += WORKGROUP_SIZE;
    }
}

/// Instance `inst`'s IK, its whole workgroup: the ground step when a goal is on the ground, then
/// each chain with a goal, each a solve (thread 0) then every thread carrying its joints. Returns
/// the chains that reached their targets (bit `k`: chain `k`), which the shader writes to the
/// instance's output (`GpuOutput::ik_reached`). WGSL `ik_joints`.
pub(crate) fn ik_joints<S: ModelStore + ?Sized>(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    inst: &GpuInstance,
    joint_count: u32,
    ground: Ground<'_>,
    store: &mut S,
) -> u32 {
    let ik = inst.ik;
    if ik == 0 {
        return 0;
    }
    let world_inv = affine_inverse(&inst.world);
    let mut wg = Pivots {
        pivots: [Affine::IDENTITY; MAX_AIM_JOINTS],
        joints: [NO_JOINT; MAX_AIM_JOINTS],
        ground: [Vec3::ZERO; MAX_IK_CHAINS],
        lift: Vec3::ZERO,
        reached: 0,
    };
    let grounded = (0..MAX_IK_CHAINS).any(|k| ik & (IK_ON << k) != 0 && target_kind(ik, k) == ik_target::GROUND);
    if grounded {
        ground_step(lib, inst, joint_count, store, &world_inv, ground, &mut wg);
        for lid in 0..WORKGROUP_SIZE {
            carry_joints(lib, inst, store, lid, joint_count, &wg);
        }
    }
    for k in 0..MAX_IK_CHAINS {
        if ik & (IK_ON << k) == 0 {
            continue;
        }
        chain_step(lib, frame, inst, store, (k, joint_count), &world_inv, &mut wg);
        for lid in 0..WORKGROUP_SIZE {
            carry_joints(lib, inst, store, lid, joint_count, &wg);
        }
    }
    wg.reached
}

/// The checks of [`ik`]: the instances hold the frame's instances, whose skeletons and joints are
/// valid; the model poses hold their joints.
fn check(lib: &AnimationLibrary, page: &PageBuffers<'_>) -> Result<()> {
    let frame = page.frame;
    let n = instance_count(frame, &[("instances", page.instances.len())])?;
    let instances = &page.instances[..n];
    for (i, inst) in instances.iter().enumerate() {
        joints(lib, frame, i, inst)?;
    }
    pose_buffer(
        frame,
        "the model pose buffer",
        page.model_poses.len(),
        0,
        joint_end(instances),
    )
}

/// Stage `ik`: each of the frame's instances' chains with a goal corrected toward their targets,
/// in the model pose buffer, on the ground `page.ground` gives (flat at 0 when none); with
/// outputs, which chains reached their targets (`GpuOutput::ik_reached`). Binds the page's
/// frame, instances, outputs (the character state) and model poses. WGSL `ik`.
///
/// Errors (nothing written): as [`local_to_model`](crate::cpu::local_to_model()).
pub fn ik(lib: &AnimationLibrary, page: &mut PageBuffers<'_>) -> Result<()> {
    check(lib, page)?;
    kernel(lib, page);
    Ok(())
}

/// Stage `ik`'s body, unchecked: one workgroup per instance.
pub(crate) fn kernel(lib: &AnimationLibrary, page: &mut PageBuffers<'_>) {
    let frame = page.frame;
    let flat = |_: Vec2| 0.0;
    let ground: Ground<'_> = page.ground.unwrap_or(&flat);
    for i in page.evaluated() {
        let inst = &page.instances[i];
        let reached = ik_joints(lib, frame, inst, inst.joint_count, ground, &mut *page.model_poses);
        if let Some(out) = page.outputs.as_deref_mut().and_then(|o| o.get_mut(i)) {
            out.ik_reached = reached;
        }
    }
}
