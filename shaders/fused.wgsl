// The whole frame in one dispatch: one workgroup per instance runs the clock, sample,
// local_to_model and palette stages' functions with the blend list and the pose kept in workgroup
// memory, so per joint only the palette is written (and, on the frame before a transition that
// interrupts another, the snapshot pose). For skeletons of at most MAX_FUSED_JOINTS joints.
// CPU mirror: cpu::fused (the staged mirrors in the same order, which compute the same values).

const MAX_FUSED_JOINTS: u32 = 128u;

// Local poses; after propagation, model matrices (an Affine's three rows in the same slots).
var<workgroup> wg_pose: array<LocalPose, 128>;
// Mesh-space additive deltas, and the original and modified model rotations (R, R').
var<workgroup> wg_delta: array<vec4<f32>, 128>;
var<workgroup> wg_r: array<vec4<f32>, 128>;
var<workgroup> wg_r_new: array<vec4<f32>, 128>;
// The instance's blend list, written by one thread and read by all: never in memory.
var<workgroup> wg_list: BlendList;

// The sample stage's blend list accessors, reading workgroup memory (`i` is the workgroup's
// instance).
fn list_count(i: u32) -> u32 {
    return wg_list.count;
}

fn list_sample(i: u32, k: u32) -> BlendSample {
    return wg_list.samples[k];
}

fn list_layer(i: u32, k: u32) -> LayerApply {
    return wg_list.layers[k];
}

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
    // clock: one thread; the blend list goes to workgroup memory only.
    if (lid == 0u) {
        var list: BlendList;
        advance_instance(i, frame.dt, &list);
        wg_list = list;
    }
    workgroupBarrier();
    // sample and layers: threads over joints, into workgroup memory.
    let joint_offset = instances[i].joint_offset;
    let joint_count = min(instances[i].joint_count, MAX_FUSED_JOINTS);
    let skel = skeleton_info(instances[i].skeleton);
    let keep_pose = (instances[i].flags & KEEP_POSE) != 0u;
    for (var j = lid; j < joint_count; j += WORKGROUP_SIZE) {
        let snapshot_slot = frame.snapshot_offset + joint_offset + j;
        let lp = layered_joint(i, skel, j, snapshot_slot);
        wg_pose[j] = lp.pose;
        wg_delta[j] = lp.mesh_delta;
        if (keep_pose) {
            local_poses[snapshot_slot] = lp.pose;
        }
    }
    workgroupBarrier();
    // local_to_model: one thread walks the joints parents-first, in place.
    if (lid == 0u) {
        let mesh = wg_list.mesh_additive != 0u;
        for (var j = 0u; j < joint_count; j++) {
            let p = joint_parent(skel.joint_offset + j);
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
        palettes[joint_offset + j] = skin_matrix(Affine(m.translation, m.rotation, m.scale), inverse_bind(skel.joint_offset + j));
    }
}
