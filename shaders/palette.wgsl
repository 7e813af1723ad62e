// Stage 4: skinning matrices K[j] = model[j] * inverse_bind[j] as 3x4 affine matrices, all
// instances' palettes in one buffer, each instance at its joint_offset (and, for an instance
// that skins with dual quaternions on a page that keeps them, K[j] as a dual quaternion and a
// stretch in the dual palettes, at the same offset); after them (from the
// frame's joint capacity, `frame.snapshot_offset`) each instance's MAX_SOCKETS socket matrices
// world * model[joint] * offset, when its skeleton has sockets. One workgroup per instance. CPU
// mirror: cpu::palette.

#define_import_path wgpu_anim::palette

#import wgpu_anim::types::{Affine, FRAME_DUAL_QUATERNION, MAX_SOCKETS, WORKGROUP_SIZE}
#import wgpu_anim::math::{affine_mul, dual_quat_from_affine, workgroup_linear}
#import wgpu_anim::culling::{evaluated_count, evaluated_instance}
#import wgpu_anim::bindings::{dual_palettes, frame, instances, model_poses, palettes}
#import wgpu_anim::library::{inverse_bind, skeleton_info, socket_at}

fn skin_matrix(model: Affine, inverse_bind: Affine) -> Affine {
    return affine_mul(model, inverse_bind);
}

virtual fn palette_model_at(joint_offset: u32, j: u32) -> Affine {
    // Joint `j`'s model matrix; the fused stage overrides it with workgroup memory.
    return model_poses[joint_offset + j];
}

// Instance `i`'s skinning matrices for joints `lid`, `lid + WORKGROUP_SIZE`, ... below
// `joint_count`, and their dual quaternions when it skins with them.
fn palette_joints(i: u32, lid: u32, joint_count: u32) {
    let joint_offset = instances[i].joint_offset;
    let skel = skeleton_info(instances[i].skeleton);
    let dual = (frame.flags & FRAME_DUAL_QUATERNION) != 0u && instances[i].dual_quaternion > 0.0;
    for (var j = lid; j < joint_count; j += WORKGROUP_SIZE) {
        let k = skin_matrix(palette_model_at(joint_offset, j), inverse_bind(skel.joint_offset + j));
        palettes[joint_offset + j] = k;
        if (dual) {
            dual_palettes[joint_offset + j] = dual_quat_from_affine(k);
        }
    }
}

// Instance `i`'s socket matrices, one per thread `lid` below its skeleton's socket count: the
// world matrix times the joint's model matrix times the socket's offset, at slot
// `frame.snapshot_offset + i * MAX_SOCKETS + lid` of the palette buffer.
fn socket_matrices(i: u32, lid: u32) {
    let skel = skeleton_info(instances[i].skeleton);
    if (lid >= min(skel.socket_count, MAX_SOCKETS)) {
        return;
    }
    let socket = socket_at(instances[i].skeleton * MAX_SOCKETS + lid);
    let model = palette_model_at(instances[i].joint_offset, socket.joint);
    palettes[frame.snapshot_offset + i * MAX_SOCKETS + lid] = affine_mul(instances[i].world, affine_mul(model, socket.offset));
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn palette(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    // With culling, the k-th listed instance (shaders/shared/culling.wgsl).
    let k = workgroup_linear(wg, groups);
    if (k >= evaluated_count()) {
        return;
    }
    let i = evaluated_instance(k);
    palette_joints(i, lid, instances[i].joint_count);
    socket_matrices(i, lid);
}
