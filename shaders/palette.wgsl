// Stage 4: skinning matrices K[j] = model[j] * inverse_bind[j] as 3x4 affine matrices, all
// instances' palettes in one buffer, each instance at its joint_offset. One workgroup per
// instance. CPU mirror: cpu::palette.

fn skin_matrix(model: Affine, inverse_bind: Affine) -> Affine {
    return affine_mul(model, inverse_bind);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn palette(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = workgroup_linear(wg, groups);
    if (i >= frame.instance_count) {
        return;
    }
    let joint_offset = instances[i].joint_offset;
    let skel = skeleton_info(instances[i].skeleton);
    for (var j = lid; j < instances[i].joint_count; j += WORKGROUP_SIZE) {
        palettes[joint_offset + j] = skin_matrix(model_poses[joint_offset + j], inverse_bind(skel.joint_offset + j));
    }
}
