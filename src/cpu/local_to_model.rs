//! Mirror of `shaders/local_to_model.wgsl`.

use crate::cpu::quat_mul;
use crate::layout::{GpuFrame, GpuInstance, LAYER_MESH, LocalPose, MAX_LAYERS};
use crate::library::AnimationLibrary;
use crate::math::Affine;
use glam::Vec4;

/// Model-space matrix of a joint from its parent's and its local pose. WGSL `joint_model`.
#[must_use]
pub fn joint_model(parent_model: &Affine, has_parent: bool, local: &LocalPose) -> Affine {
    let m = Affine::from_sqt(
        local.translation.truncate(),
        glam::Quat::from_vec4(local.rotation),
        local.scale.truncate(),
    );
    if has_parent {
        return parent_model.mul(&m);
    }
    m
}

/// Whether an instance has a mesh-space additive layer that is on. WGSL `has_mesh_layer`.
#[must_use]
pub fn has_mesh_layer(inst: &GpuInstance) -> bool {
    inst.flags & (LAYER_MESH * ((1 << MAX_LAYERS) - 1)) != 0
}

/// Stage `local_to_model`: one invocation per instance walks its joints parents-first, applying
/// mesh-space additive rotation deltas (kept after the snapshots in `local`) on the way.
#[expect(clippy::needless_range_loop, reason = "keeps the code comparable to the shader")]
pub fn local_to_model(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    instances: &[GpuInstance],
    local: &mut [LocalPose],
    model: &mut [Affine],
) {
    for i in 0..frame.instance_count as usize {
        let inst = &instances[i];
        let skel = &lib.gpu_skeletons[inst.skeleton as usize];
        let mesh = has_mesh_layer(inst);
        for j in 0..inst.joint_count {
            let p = lib.parents[(skel.joint_offset + j) as usize];
            let has_parent = p >= 0 && (p as u32) < j;
            let mut parent_model = Affine::IDENTITY;
            if has_parent {
                parent_model = model[(inst.joint_offset + p as u32) as usize];
            }
            let mut pose = local[(inst.joint_offset + j) as usize];
            if mesh {
                let scratch = (2 * frame.snapshot_offset + inst.joint_offset) as usize;
                let d = local[scratch + j as usize].rotation;
                let mut r = pose.rotation;
                let mut r_parent_new = Vec4::W;
                if has_parent {
                    let ps = local[scratch + p as usize];
                    r = quat_mul(ps.translation, pose.rotation);
                    r_parent_new = ps.scale;
                }
                let r_new = quat_mul(d, r).normalize();
                pose.rotation = quat_mul(
                    Vec4::new(-r_parent_new.x, -r_parent_new.y, -r_parent_new.z, r_parent_new.w),
                    r_new,
                )
                .normalize();
                local[scratch + j as usize] = LocalPose {
                    translation: r,
                    rotation: d,
                    scale: r_new,
                };
            }
            model[(inst.joint_offset + j) as usize] = joint_model(&parent_model, has_parent, &pose);
        }
    }
}
