// The ground of the built-in scenes: a grid over ±GROUND_HALF_SIZE at the height of
// `ground_height` (prepended to this file: flat, or the crowd's relief, the same function the IK
// stage's ground goals stand on), with a soft checkerboard shaded by its slope that fades with
// distance. Its cells are small near the centre and grow outward. Not an animation stage; drawn
// with the same Camera as skin.wgsl.

// The camera (Rust: layout::Camera): its WGSL declaration is prepended to this file.
@group(0) @binding(0) var<uniform> camera: Camera;

struct GroundOut {
    @builtin(position) clip_position: vec4<f32>,
    @location(0) world: vec3<f32>,
}

const GROUND_HALF_SIZE: f32 = 500.0;

// Cells per side: 1 for flat ground (one quad), more for relief (GroundRenderer sets it).
override GRID: u32 = 1u;

// Where grid line `k` of GRID lies: u in [-1, 1] cubed toward the centre, so cells are small
// where the crowd stands.
fn grid_line(k: u32) -> f32 {
    let u = f32(k) / f32(GRID) * 2.0 - 1.0;
    return u * u * u * GROUND_HALF_SIZE;
}

@vertex
fn vs_ground(@builtin(vertex_index) v: u32) -> GroundOut {
    // Two triangles per cell, counter-clockwise seen from above.
    var corners = array<vec2<u32>, 6>(
        vec2<u32>(0u, 0u), vec2<u32>(0u, 1u), vec2<u32>(1u, 1u),
        vec2<u32>(0u, 0u), vec2<u32>(1u, 1u), vec2<u32>(1u, 0u),
    );
    let cell = v / 6u;
    let c = vec2<u32>(cell % GRID, cell / GRID) + corners[v % 6u];
    let xz = vec2<f32>(grid_line(c.x), grid_line(c.y));
    let world = vec3<f32>(xz.x, ground_height(xz), xz.y);
    return GroundOut(camera.view_proj * vec4<f32>(world, 1.0), world);
}

@fragment
fn fs_ground(in: GroundOut) -> @location(0) vec4<f32> {
    let cell = floor(in.world.xz / 2.0);
    let checker = (i32(cell.x) + i32(cell.y)) & 1;
    let base = select(vec3<f32>(0.30, 0.33, 0.30), vec3<f32>(0.36, 0.39, 0.36), checker == 1);
    // Shaded by the slope against flat ground's shade (flat ground looks as it always did).
    let e = 0.05;
    let p = in.world.xz;
    let n = normalize(vec3<f32>(
        ground_height(p - vec2<f32>(e, 0.0)) - ground_height(p + vec2<f32>(e, 0.0)),
        2.0 * e,
        ground_height(p - vec2<f32>(0.0, e)) - ground_height(p + vec2<f32>(0.0, e)),
    ));
    let l = -normalize(camera.light_dir.xyz);
    let shade = (0.3 + 0.7 * max(dot(n, l), 0.0)) / (0.3 + 0.7 * max(l.y, 0.0));
    let distance = length(in.world.xz - camera.eye.xz);
    let fog = clamp(distance / 300.0, 0.0, 1.0);
    return vec4<f32>(mix(base * shade, vec3<f32>(0.55, 0.62, 0.70), fog), 1.0);
}
