// Culling (Frame.flags FRAME_CULL): which characters a frame draws and evaluates (update-rate LOD
// evaluates the small ones every 2, 4 or 8 frames), and where each later stage finds the instance
// it works on. The clock stage (or the fused one) marks each character (`mark_evaluation`); the
// cull stage lists the marked ones; sample, local_to_model, ik and palette run over the evaluated
// list by indirect dispatch (`evaluated_count`, `evaluated_instance`), a culled draw over the
// drawn list.
// Rust mirror: cpu::cull.

#define_import_path wgpu_anim::culling

#import wgpu_anim::types::{
    Affine, BlendSample, FRAME_CULL, FRAME_CULL_VIEW, FRAME_VAT, INERTIA_KEEP_POSE, INERTIA_SWITCH, INERTIA_VELOCITY, MARK_DRAWN,
    MARK_ENTERED, MARK_EVALUATE, MARK_RATE_SHIFT, MARK_VAT,
}
#import wgpu_anim::bindings::{character_state, frame, instances, visible}

// A bound of the largest singular value of world's linear part (how far it stretches a length):
// the square root of the largest row sum of |AᵀA| (Gershgorin), exact for a rotation times a
// uniform scale and above it for any other linear part. Rust: cpu::cull::world_stretch.
fn world_stretch(world: Affine) -> f32 {
    let c0 = vec3<f32>(world.x.x, world.y.x, world.z.x);
    let c1 = vec3<f32>(world.x.y, world.y.y, world.z.y);
    let c2 = vec3<f32>(world.x.z, world.y.z, world.z.z);
    let g01 = abs(dot(c0, c1));
    let g02 = abs(dot(c0, c2));
    let g12 = abs(dot(c1, c2));
    return sqrt(max(max(dot(c0, c0) + g01 + g02, dot(c1, c1) + g01 + g12), dot(c2, c2) + g02 + g12));
}

// Whether the sphere of `radius` (model units) around the origin of `world` meets the view's
// frustum (Frame.cull_planes), the radius stretched by world_stretch. Rust:
// cpu::cull::sphere_in_view.
fn sphere_in_view(world: Affine, radius: f32) -> bool {
    let r = radius * world_stretch(world);
    let center = vec3<f32>(world.x.w, world.y.w, world.z.w);
    var inside = true;
    for (var k = 0u; k < 6u; k++) {
        let p = frame.cull_planes[k];
        inside = inside && dot(p.xyz, center) + p.w >= -r;
    }
    return inside;
}

// Character i's update rate, 1, 2, 4 or 8: its own (Instance.update_rate), or with a view by its
// projected size (its bound radius over its centre's clip w, in half view heights) against
// Frame.lod's thresholds; else 1. Rust: cpu::cull::update_rate.
fn update_rate(i: u32, world: Affine, radius: f32) -> u32 {
    let own = instances[i].update_rate;
    if (own != 0u) {
        return own;
    }
    if ((frame.flags & FRAME_CULL_VIEW) == 0u) {
        return 1u;
    }
    let size = projected_size(world, radius);
    var rate = 1u;
    if (size < frame.lod.x) {
        rate = 2u;
    }
    if (size < frame.lod.y) {
        rate = 4u;
    }
    if (size < frame.lod.z) {
        rate = 8u;
    }
    return rate;
}

// A character's projected size: its bound radius (stretched by world_stretch) times the view's
// projection scale (Frame.lod.w) over its centre's clip w, in half view heights. Rust:
// cpu::cull::projected_size.
fn projected_size(world: Affine, radius: f32) -> f32 {
    let w = max(dot(frame.view_w, vec4<f32>(world.x.w, world.y.w, world.z.w, 1.0)), 1e-6);
    return radius * world_stretch(world) * frame.lod.w / w;
}

// Whether the frame draws character i, seen (`seen`), with its VAT, its blend list holding
// `count` samples, the first `first`, and inertialization bits `inertia`: with FRAME_VAT, when
// its Instance.vat names the clip its list plays alone in its base state, no inertialization
// runs, the frame keeps no state and it is smaller than Frame.vat_size. Rust:
// cpu::cull::plays_vat.
fn plays_vat(i: u32, inertia: u32, count: u32, first: BlendSample, seen: bool) -> bool {
    let vat = instances[i].vat;
    if ((frame.flags & FRAME_VAT) == 0u || !seen || vat == 0u || count != 1u || inertia != 0u) {
        return false;
    }
    return first.clip == vat - 1u && first.layer == 0u && !keeps_state(inertia)
        && projected_size(instances[i].world, instances[i].bound_radius) < frame.vat_size;
}

// Whether this frame of character i keeps what its later frames read, so that it is evaluated
// whatever the view: the pose (and velocity) an interrupting transition starts from, or the
// first frame of an offset decay, which sets the decay up (`inertia` the blend list's bits).
// Rust: cpu::cull::keeps_state.
fn keeps_state(inertia: u32) -> bool {
    return (inertia & (INERTIA_KEEP_POSE | INERTIA_VELOCITY | INERTIA_SWITCH)) != 0u;
}

// The frame within every 8 on which a character of global index `index` is due: the top three
// bits of its Fibonacci hash, so that the characters of any rate, however they are spread over
// the indices, fall evenly on the frames. Rust: cpu::cull::phase.
fn phase(index: u32) -> u32 {
    return (index * 0x9e3779b1u) >> 29u;
}

// With FRAME_CULL: marks character i (its Output.evaluate) for this frame, its blend list's
// inertialization bits `inertia`, sample count `count` and first sample `first` (a few words,
// not the 320-byte list), and says whether it is evaluated. Seen: with a view (FRAME_CULL_VIEW), when its bounds
// meet the view; without one, always. Drawn with its VAT (MARK_VAT, plays_vat; its clip time
// left in Instance.vat_time): neither evaluated nor drawn skinned. Else drawn (MARK_DRAWN) when
// seen (MARK_ENTERED too when it was not drawn skinned the frame before, and its update rate's
// log2 from MARK_RATE_SHIFT), and evaluated (MARK_EVALUATE) when the frame keeps state, or when
// it is drawn and due at its update rate (every `rate` frames, each character on its own phase)
// or has just entered. Call after the clock moved its world. Rust: cpu::cull::marks.
fn mark_evaluation(i: u32, inertia: u32, count: u32, first: BlendSample) -> bool {
    let world = instances[i].world;
    let radius = instances[i].bound_radius;
    var drawn = true;
    if ((frame.flags & FRAME_CULL_VIEW) != 0u) {
        drawn = sphere_in_view(world, radius);
    }
    let b = frame.output_base + 8u * i + 3u;
    if (plays_vat(i, inertia, count, first, drawn)) {
        character_state[b].z = MARK_VAT;
        instances[i].vat_time = first.time;
        return false;
    }
    let was_drawn = (character_state[b].z & MARK_DRAWN) != 0u;
    let rate = update_rate(i, world, radius);
    let due = ((frame.frame + phase(frame.first_instance + i)) & (rate - 1u)) == 0u;
    let entered = drawn && !was_drawn;
    let evaluate = keeps_state(inertia) || (drawn && (due || entered));
    character_state[b].z = select(0u, MARK_EVALUATE, evaluate)
        | select(0u, MARK_DRAWN | (countTrailingZeros(rate) << MARK_RATE_SHIFT), drawn)
        | select(0u, MARK_ENTERED, entered);
    return evaluate;
}

// Character i's marks this frame (Output.evaluate).
fn marks_of(i: u32) -> u32 {
    return character_state[frame.output_base + 8u * i + 3u].z;
}

// Where a held character stands between its last two evaluations, in [0, 1): the frames since
// the last one over its update rate. Rust: cpu::cull::held_fraction.
fn held_fraction(i: u32) -> f32 {
    let rate = update_rate(i, instances[i].world, instances[i].bound_radius);
    return f32((frame.frame + phase(frame.first_instance + i)) & (rate - 1u)) / f32(rate);
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

// The drawn instances (with culling): how many, and the k-th's page index.
fn drawn_count() -> u32 {
    return visible.drawn_count;
}

fn drawn_instance(k: u32) -> u32 {
    return visible.list[visible.drawn_offset + k];
}
