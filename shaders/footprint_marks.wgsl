// The marks `footprints.wgsl` stamps, drawn on the ground: a quad along the foot per mark, an
// ellipse fading with the mark's age. Rust: gpu::FootprintRenderer.

// As in footprints.wgsl.
struct Mark {
    position: vec4<f32>,
    direction: vec4<f32>,
}

// The ring as footprints.wgsl writes it; its counter is not read here.
struct Marks {
    next: u32,
    pad_a: u32,
    pad_b: u32,
    pad_c: u32,
    marks: array<Mark>,
}

// The renderer's view: the camera (Rust: layout::Camera, whose WGSL declaration is prepended to
// this file), and the marks' clock now (x).
@group(0) @binding(0) var<uniform> camera: Camera;
@group(0) @binding(1) var<uniform> now: vec4<f32>;
@group(0) @binding(2) var<storage, read> drawn: Marks;

// Seconds a mark stays visible, fading out.
const LIFETIME: f32 = 6.0;
// A footprint's half width and half length, metres.
const HALF_SIZE: vec2<f32> = vec2<f32>(0.05, 0.12);

struct MarkOut {
    @builtin(position) clip_position: vec4<f32>,
    // The corner in footprint units ([-1, 1]²), and the mark's opacity.
    @location(0) uv: vec2<f32>,
    @location(1) alpha: f32,
}

// Six vertices per mark: a quad on the ground along the foot.
@vertex
fn vs_mark(@builtin(vertex_index) v: u32) -> MarkOut {
    var corners = array<vec2<f32>, 6>(
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(1.0, -1.0),
        vec2<f32>(-1.0, -1.0), vec2<f32>(-1.0, 1.0), vec2<f32>(1.0, 1.0),
    );
    let mark = drawn.marks[v / 6u];
    let uv = corners[v % 6u];
    var out: MarkOut;
    let age = now.x - mark.position.w;
    out.alpha = 0.5 * clamp(1.0 - age / LIFETIME, 0.0, 1.0) * select(0.0, 1.0, age >= 0.0);
    var forward = mark.direction.xy;
    if (dot(forward, forward) < 1e-8) {
        forward = vec2<f32>(0.0, 1.0);
    }
    forward = normalize(forward);
    let right = vec2<f32>(-forward.y, forward.x);
    let p = mark.position.xz + right * uv.x * HALF_SIZE.x + forward * uv.y * HALF_SIZE.y;
    // Where the sole landed (on relief, the ground's height there), 12 mm above it: the mark is
    // flat, and the drawn ground's cells are straight.
    out.clip_position = camera.view_proj * vec4<f32>(p.x, mark.position.y + 0.012, p.y, 1.0);
    if (out.alpha <= 0.0) {
        out.clip_position = vec4<f32>(0.0, 0.0, -1.0, 1.0);
    }
    out.uv = uv;
    return out;
}

@fragment
fn fs_mark(in: MarkOut) -> @location(0) vec4<f32> {
    // A sole: an ellipse narrowing towards the heel.
    let width = mix(0.75, 1.0, 0.5 + 0.5 * in.uv.y);
    let d = length(vec2<f32>(in.uv.x / width, in.uv.y));
    if (d > 1.0) {
        discard;
    }
    return vec4<f32>(0.12, 0.10, 0.08, in.alpha * smoothstep(1.0, 0.8, d));
}
