// The whole frame in one dispatch: one workgroup per instance runs the clock, sample,
// local_to_model and palette stages' functions with the pose kept in workgroup memory, so per
// joint only the palette is written (and the local pose while a cross-fade runs, for snapshots).
// For skeletons of at most MAX_FUSED_JOINTS joints. CPU mirror: cpu::fused (the staged mirrors
// in the same order, which compute the same values).

const MAX_FUSED_JOINTS: u32 = 128u;

// Local poses; after propagation, model matrices (an Affine's three rows in the same slots).
var<workgroup> wg_pose: array<LocalPose, 128>;
// Mesh-space additive deltas, and the original and modified model rotations (R, R').
var<workgroup> wg_delta: array<vec4<f32>, 128>;
var<workgroup> wg_r: array<vec4<f32>, 128>;
var<workgroup> wg_r_new: array<vec4<f32>, 128>;

@compute @workgroup_size(WORKGROUP_SIZE)
fn fused(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = workgroup_linear(wg, groups);
    if (i >= frame.instance_count) {
        return;
    }
    // clock: one thread.
    if (lid == 0u) {
        var list: BlendList;
        clocks[i] = advance_instance(instances[i], clocks[i], frame.dt, &list);
        blend_lists[i] = list;
    }
    storageBarrier();
    workgroupBarrier();
    // sample and layers: threads over joints, into workgroup memory.
    let joint_offset = instances[i].joint_offset;
    let joint_count = min(instances[i].joint_count, MAX_FUSED_JOINTS);
    let skel = skeletons[instances[i].skeleton];
    let take_snapshot = blend_lists[i].take_snapshot;
    // Snapshots need the pose last shown: keep local poses while a cross-fade runs (and a little
    // after, so the CPU's and the GPU's clocks need not agree to the last bit).
    let kind = instances[i].transition & 15u;
    let keep_local = kind != SOURCE_NONE && clocks[i].transition_time < instances[i].transition_duration + 0.1;
    for (var j = lid; j < joint_count; j += WORKGROUP_SIZE) {
        let slot = joint_offset + j;
        let snapshot_slot = frame.snapshot_offset + slot;
        if (take_snapshot != 0u) {
            local_poses[snapshot_slot] = local_poses[slot];
        }
        let lp = layered_joint(i, skel, j, snapshot_slot);
        wg_pose[j] = lp.pose;
        wg_delta[j] = lp.mesh_delta;
        if (keep_local) {
            local_poses[slot] = lp.pose;
        }
    }
    workgroupBarrier();
    // local_to_model: one thread walks the joints parents-first, in place.
    if (lid == 0u) {
        let mesh = has_mesh_layer(instances[i]);
        for (var j = 0u; j < joint_count; j++) {
            let p = parents[skel.joint_offset + j];
            let has_parent = p >= 0 && u32(p) < j;
            var parent_model = Affine(vec4<f32>(1.0, 0.0, 0.0, 0.0), vec4<f32>(0.0, 1.0, 0.0, 0.0), vec4<f32>(0.0, 0.0, 1.0, 0.0));
            if (has_parent) {
                let m = wg_pose[u32(p)];
                parent_model = Affine(m.translation, m.rotation, m.scale);
            }
            var local = wg_pose[j];
            if (mesh) {
                let d = wg_delta[j];
                var r = local.rotation;
                var r_parent_new = vec4<f32>(0.0, 0.0, 0.0, 1.0);
                if (has_parent) {
                    r = quat_mul(wg_r[u32(p)], local.rotation);
                    r_parent_new = wg_r_new[u32(p)];
                }
                let r_new = normalize(quat_mul(d, r));
                local.rotation = normalize(quat_mul(quat_conjugate(r_parent_new), r_new));
                wg_r[j] = r;
                wg_r_new[j] = r_new;
            }
            let m = joint_model(parent_model, has_parent, local);
            wg_pose[j] = LocalPose(m.x, m.y, m.z);
        }
    }
    workgroupBarrier();
    // palette: threads over joints.
    for (var j = lid; j < joint_count; j += WORKGROUP_SIZE) {
        let m = wg_pose[j];
        palettes[joint_offset + j] = skin_matrix(Affine(m.translation, m.rotation, m.scale), inverse_binds[skel.joint_offset + j]);
    }
}
