// Culling (Frame.flags FRAME_CULL): which characters a frame evaluates, and where each later
// stage finds the instance it works on. The clock stage (or the fused one) marks each character
// (`mark_evaluation`); the cull stage lists the marked ones; sample, local_to_model, ik and
// palette run over that list by indirect dispatch (`evaluated_count`, `evaluated_instance`).
// Rust mirror: cpu::cull.

#define_import_path wgpu_anim::culling

#import wgpu_anim::types::{Affine, FRAME_CULL, FRAME_CULL_VIEW, INERTIA_SWITCH, KEEP_POSE, KEEP_VELOCITY}
#import wgpu_anim::bindings::{character_state, frame, instances, visible}

// Whether the sphere of `radius` (model units) around the origin of `world` meets the view's
// frustum (Frame.cull_planes). The radius is stretched by a bound of world's largest singular
// value: the largest row sum of |AᵀA| (Gershgorin), exact for a rotation times a uniform scale
// and above it for any other linear part. Rust: cpu::cull::sphere_in_view.
fn sphere_in_view(world: Affine, radius: f32) -> bool {
    let c0 = vec3<f32>(world.x.x, world.y.x, world.z.x);
    let c1 = vec3<f32>(world.x.y, world.y.y, world.z.y);
    let c2 = vec3<f32>(world.x.z, world.y.z, world.z.z);
    let g01 = abs(dot(c0, c1));
    let g02 = abs(dot(c0, c2));
    let g12 = abs(dot(c1, c2));
    let stretch2 = max(max(dot(c0, c0) + g01 + g02, dot(c1, c1) + g01 + g12), dot(c2, c2) + g02 + g12);
    let r = radius * sqrt(stretch2);
    let center = vec3<f32>(world.x.w, world.y.w, world.z.w);
    var inside = true;
    for (var k = 0u; k < 6u; k++) {
        let p = frame.cull_planes[k];
        inside = inside && dot(p.xyz, center) + p.w >= -r;
    }
    return inside;
}

// Whether this frame of character i keeps what its later frames read, so that it is evaluated
// whatever the view: the pose (and velocity) an interrupting transition starts from, or the
// first frame of an offset decay, which sets the decay up (`inertia` the blend list's bits).
// Rust: cpu::cull::keeps_state.
fn keeps_state(i: u32, inertia: u32) -> bool {
    return (instances[i].flags & (KEEP_POSE | KEEP_VELOCITY)) != 0u || (inertia & INERTIA_SWITCH) != 0u;
}

// With FRAME_CULL: marks character i (its Output.evaluate) for evaluation this frame and says
// whether it is: with a view (FRAME_CULL_VIEW), when its bounds meet the view or the frame keeps
// state; without one, always. Call after the clock moved its world. Rust: cpu::cull::evaluates.
fn mark_evaluation(i: u32, inertia: u32) -> bool {
    var evaluate = true;
    if ((frame.flags & FRAME_CULL_VIEW) != 0u) {
        evaluate = keeps_state(i, inertia) || sphere_in_view(instances[i].world, instances[i].bound_radius);
    }
    let b = frame.output_base + 8u * i + 3u;
    character_state[b].z = select(0u, 1u, evaluate);
    return evaluate;
}

// How many instances the later stages work on: the page's listed ones with culling, else all.
fn evaluated_count() -> u32 {
    if ((frame.flags & FRAME_CULL) != 0u) {
        return visible.count;
    }
    return frame.instance_count;
}

// The page index of the k-th instance the later stages work on.
fn evaluated_instance(k: u32) -> u32 {
    if ((frame.flags & FRAME_CULL) != 0u) {
        return visible.list[k];
    }
    return k;
}
