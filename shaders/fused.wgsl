// After the clock pass (a thread per character, which writes the blend lists and, with culling,
// the marks), the rest of the frame in one dispatch: one workgroup per instance calls the sample,
// local_to_model, ik (with IK chains) and palette stages' own functions (`sample_joints`,
// `propagate_joint`, `ik_joints`, `palette_joints`) with the pose kept in workgroup memory: the
// stages' storage accessors are overridden below, so per joint only the palette is written (and,
// on the frame before a transition that interrupts another, the snapshot pose). Every step keeps the threads on joints: the hierarchy is walked a level at a time, the
// joints of a level in parallel (AnimationLibrary::levels). For skeletons of at most
// MAX_FUSED_JOINTS joints. CPU mirror: cpu::fused, the same steps in the same order.
// With THREAD_PER_CHARACTER (gpu::CharacterThreads::One, a CPU adapter's choice) each thread
// takes a character of its own through the same stages' functions, its pose in the local pose
// buffer (eight characters' poses do not fit in WebGPU's 16 KiB of workgroup memory), each
// joint's model matrix in place of its local pose as in workgroup memory above, mesh-space
// rotations where the staged pass keeps them: no step waits on another thread, but for IK's.

#import wgpu_anim::types::{
    Affine, FRAME_CULL, LocalPose, MARK_DRAWN, MARK_EVALUATE, MAX_FUSED_JOINTS,
}
#import wgpu_anim::culling::marks_of
#import wgpu_anim::math::{CHARACTER_THREADS, CHARACTERS_PER_WORKGROUP, workgroup_character, workgroup_linear}
#import wgpu_anim::bindings::{frame, instances, local_poses, pose_history}
#import wgpu_anim::library::{joint_level, skeleton_info}
#import wgpu_anim::sample::{LayeredPose, sample_joints}
#import wgpu_anim::sample as sample_stage
#import wgpu_anim::local_to_model::{has_mesh_layer, propagate, propagate_joint}
#import wgpu_anim::local_to_model as local_to_model_stage
#import wgpu_anim::palette::{frame_interpolates, interpolate_joints, palette_joints, socket_matrices}
#import wgpu_anim::palette as palette_stage
#ifdef IK
#import wgpu_anim::ik::ik_joints
#import wgpu_anim::ik as ik_stage
#endif

// No local pose is kept from the frame before (see sample_stage::last_pose_at).
override fn sample_stage::last_pose_at(slot: u32, now: LocalPose) -> LocalPose {
    return now;
}

#ifndef THREAD_PER_CHARACTER
// Local poses; after propagation, model matrices (an Affine's three rows in the same slots).
var<workgroup> wg_pose: array<LocalPose, MAX_FUSED_JOINTS>;
// Mesh-space additive deltas, and the original and modified model rotations (R, R').
var<workgroup> wg_delta: array<vec4<f32>, MAX_FUSED_JOINTS>;
var<workgroup> wg_r: array<vec4<f32>, MAX_FUSED_JOINTS>;
var<workgroup> wg_r_new: array<vec4<f32>, MAX_FUSED_JOINTS>;
// The workgroup's character's marks this frame (Output.evaluate; evaluated and drawn without
// culling).
var<workgroup> wg_marks: u32;
// The levels of the character's hierarchy.
var<workgroup> wg_levels: u32;

// The sampled pose and delta stay in workgroup memory; only a kept snapshot goes to memory.
override fn sample_stage::store_joint(joint_offset: u32, j: u32, lp: LayeredPose, keep_pose: bool, mesh_additive: bool) {
    wg_pose[j] = lp.pose;
    wg_delta[j] = lp.mesh_delta;
    if (keep_pose) {
        pose_history[joint_offset + j] = lp.pose;
    }
}

// The walk reads the local pose where store_joint kept it, and keeps the model matrix in its place
// (kept_model).
override fn local_to_model_stage::local_at(joint_offset: u32, j: u32) -> LocalPose {
    return wg_pose[j];
}

override fn local_to_model_stage::mesh_delta_at(joint_offset: u32, j: u32) -> vec4<f32> {
    return wg_delta[j];
}

override fn local_to_model_stage::mesh_rotations_at(joint_offset: u32, j: u32) -> array<vec4<f32>, 2> {
    return array<vec4<f32>, 2>(wg_r[j], wg_r_new[j]);
}

override fn local_to_model_stage::set_mesh_rotations(joint_offset: u32, j: u32, r: vec4<f32>, d: vec4<f32>, r_new: vec4<f32>) {
    wg_r[j] = r;
    wg_r_new[j] = r_new;
}
#endif

// Joint j's model matrix where the walk keeps it in place of its local pose (an Affine's three
// rows in a LocalPose's slots): joint j's local pose is read before its model matrix replaces
// it, and a parent's model matrix is written before its children read it. In workgroup memory;
// with THREAD_PER_CHARACTER in the local pose buffer, where the sample stage's own store_joint
// put the pose (all by the character's thread; IK's carried joints after a barrier).
fn kept_model(joint_offset: u32, j: u32) -> Affine {
#ifdef THREAD_PER_CHARACTER
    let m = local_poses[joint_offset + j];
#else
    let m = wg_pose[j];
#endif
    return Affine(m.translation, m.rotation, m.scale);
}

fn keep_model(joint_offset: u32, j: u32, m: Affine) {
#ifdef THREAD_PER_CHARACTER
    local_poses[joint_offset + j] = LocalPose(m.x, m.y, m.z);
#else
    wg_pose[j] = LocalPose(m.x, m.y, m.z);
#endif
}

override fn local_to_model_stage::model_at(joint_offset: u32, j: u32) -> Affine {
    return kept_model(joint_offset, j);
}

override fn local_to_model_stage::set_model(joint_offset: u32, j: u32, m: Affine) {
    keep_model(joint_offset, j, m);
}

#ifdef IK
override fn ik_stage::ik_model_at(joint_offset: u32, j: u32) -> Affine {
    return kept_model(joint_offset, j);
}

override fn ik_stage::ik_set_model(joint_offset: u32, j: u32, m: Affine) {
    keep_model(joint_offset, j, m);
}
#endif

override fn palette_stage::palette_model_at(joint_offset: u32, j: u32) -> Affine {
    return kept_model(joint_offset, j);
}

@compute @workgroup_size(CHARACTER_THREADS)
fn fused(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
#ifdef THREAD_PER_CHARACTER
    fused_characters(wg, groups, lid);
#else
    let i = workgroup_linear(wg, groups);
    if (i >= frame.instance_count) {
        return;
    }
    let joint_count = min(instances[i].joint_count, MAX_FUSED_JOINTS);
    let skeleton = skeleton_info(instances[i].skeleton);
    let skeleton_joints = skeleton.joint_offset;
    let entries = min(skeleton.joint_count, MAX_FUSED_JOINTS);
    // One thread brings to workgroup memory what every thread's control flow depends on: with
    // culling, the marks the clock pass wrote (the rest runs only for a character marked for
    // evaluation, shaders/shared/culling.wgsl, or has its palette interpolated; the cull pass
    // after this one lists them for the draw), and the number of levels (the depth of the last
    // joint in depth order, plus one). The sample stage reads the blend list where the clock
    // wrote it: a copy in workgroup memory cost lavapipe more than the reads it saves.
    if (lid == 0u) {
        wg_marks = MARK_EVALUATE | MARK_DRAWN;
        if ((frame.flags & FRAME_CULL) != 0u) {
            wg_marks = marks_of(i);
        }
        wg_levels = 0u;
        if (entries > 0u) {
            wg_levels = ((joint_level(skeleton_joints + entries - 1u) >> 8u) & 0xffu) + 1u;
        }
    }
    let marks = workgroupUniformLoad(&wg_marks);
    let interpolating = frame_interpolates();
    if ((marks & MARK_EVALUATE) == 0u) {
        if (interpolating && (marks & MARK_DRAWN) != 0u) {
            interpolate_joints(i, lid, joint_count);
        }
        return;
    }
    // sample and layers: threads over joints.
    sample_joints(i, lid, joint_count);
    workgroupBarrier();
    // local_to_model: a level at a time, parents before children; level d's joints on threads
    // 0, 1, ... (its entries of the skeleton's depth order; an instance animating fewer joints
    // than its skeleton skips the others), a barrier between levels (HierarchyWalk::Levels). A GPU
    // runs a level's joints at once; a CPU adapter runs the workgroup's SIMD groups in turn, each
    // through every level and barrier, where one thread walking every joint measured cheaper
    // (benches/results/2026-11-27-1030-fused-clock-pass-and-levels.md).
#ifdef ONE_THREAD_WALK
    // On a CPU adapter (HierarchyWalk::OneThread): one thread walks every joint.
    if (lid == 0u) {
        propagate(i, joint_count);
    }
    workgroupBarrier();
#else
    let levels = workgroupUniformLoad(&wg_levels);
    let joint_offset = instances[i].joint_offset;
    let mesh = has_mesh_layer(i);
    for (var d = 0u; d < levels; d++) {
        // Level d is entries start(d)..start(d + 1), the last one's end the entries' count.
        var end = entries;
        if (d + 1u < entries) {
            end = joint_level(skeleton_joints + d + 1u) >> 16u;
        }
        for (var k = (joint_level(skeleton_joints + d) >> 16u) + lid; k < end; k += CHARACTER_THREADS) {
            let j = joint_level(skeleton_joints + k) & 0xffu;
            if (j < joint_count) {
                propagate_joint(joint_offset, skeleton_joints, mesh, j);
            }
        }
        workgroupBarrier();
    }
#endif
#ifdef IK
    // ik: threads over joints (it ends on a barrier when it corrects anything).
    ik_joints(i, lid, joint_count);
#endif
    // palette: threads over joints; sockets: a thread each. Interpolating, only for a character
    // drawn (as the staged palette pass runs over the drawn ones).
    if (interpolating && (marks & MARK_DRAWN) == 0u) {
        return;
    }
    palette_joints(i, lid, joint_count);
    socket_matrices(i, lid);
#endif
}

#ifdef THREAD_PER_CHARACTER
#ifdef IK
// The marks of the character the workgroup's threads correct together.
var<workgroup> wg_ik_marks: u32;
#endif

// The workgroup's characters, thread `lid` on the workgroup_character's: sampled and propagated
// by its thread; with IK, corrected by all the threads together a character at a time, as the ik
// pass does; then its palette by its thread (or, held by update-rate LOD, interpolated). Every
// thread reaches IK's barriers: none leaves before.
fn fused_characters(wg: vec3<u32>, groups: vec3<u32>, lid: u32) {
    let i = workgroup_character(wg, groups, lid);
    var marks = 0u;
    if (i < frame.instance_count) {
        marks = character_marks(i);
    }
    var joint_count = 0u;
    if ((marks & MARK_EVALUATE) != 0u) {
        joint_count = min(instances[i].joint_count, MAX_FUSED_JOINTS);
        sample_joints(i, lid, joint_count);
        propagate(i, joint_count);
    }
#ifdef IK
    storageBarrier();
    workgroupBarrier();
    let first = workgroup_linear(wg, groups) * CHARACTERS_PER_WORKGROUP;
    for (var c = first; c < min(first + CHARACTERS_PER_WORKGROUP, frame.instance_count); c++) {
        // The marks read by one thread for all: IK's barriers need control flow the same across
        // the workgroup, and a value read from read-write storage is not known to be.
        if (lid == 0u) {
            wg_ik_marks = character_marks(c);
        }
        if ((workgroupUniformLoad(&wg_ik_marks) & MARK_EVALUATE) != 0u) {
            ik_joints(c, lid, min(instances[c].joint_count, MAX_FUSED_JOINTS));
        }
    }
#endif
    let interpolating = frame_interpolates();
    if ((marks & MARK_EVALUATE) == 0u) {
        if (interpolating && (marks & MARK_DRAWN) != 0u) {
            interpolate_joints(i, lid, min(instances[i].joint_count, MAX_FUSED_JOINTS));
        }
        return;
    }
    if (interpolating && (marks & MARK_DRAWN) == 0u) {
        return;
    }
    palette_joints(i, lid, joint_count);
    socket_matrices(i, lid);
}

// Character `i`'s marks this frame: with culling, those the clock pass wrote; else evaluated and
// drawn.
fn character_marks(i: u32) -> u32 {
    if ((frame.flags & FRAME_CULL) != 0u) {
        return marks_of(i);
    }
    return MARK_EVALUATE | MARK_DRAWN;
}
#endif
