// A ground plane for the built-in scenes: a large quad at y = 0 with a soft checkerboard that fades
// with distance. Not an animation stage; drawn with the same Camera as skin.wgsl.

struct Camera {
    view_proj: mat4x4<f32>,
    eye: vec4<f32>,
    light_dir: vec4<f32>,
}

@group(0) @binding(0) var<uniform> camera: Camera;

struct GroundOut {
    @builtin(position) clip_position: vec4<f32>,
    @location(0) world: vec3<f32>,
}

const GROUND_HALF_SIZE: f32 = 500.0;

@vertex
fn vs_ground(@builtin(vertex_index) v: u32) -> GroundOut {
    // Two triangles, counter-clockwise seen from above.
    var corners = array<vec2<f32>, 6>(
        vec2<f32>(-1.0, -1.0), vec2<f32>(-1.0, 1.0), vec2<f32>(1.0, 1.0),
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(1.0, -1.0),
    );
    let c = corners[v] * GROUND_HALF_SIZE;
    let world = vec3<f32>(c.x, 0.0, c.y);
    return GroundOut(camera.view_proj * vec4<f32>(world, 1.0), world);
}

@fragment
fn fs_ground(in: GroundOut) -> @location(0) vec4<f32> {
    let cell = floor(in.world.xz / 2.0);
    let checker = (i32(cell.x) + i32(cell.y)) & 1;
    let base = select(vec3<f32>(0.30, 0.33, 0.30), vec3<f32>(0.36, 0.39, 0.36), checker == 1);
    let distance = length(in.world.xz - camera.eye.xz);
    let fog = clamp(distance / 300.0, 0.0, 1.0);
    return vec4<f32>(mix(base, vec3<f32>(0.55, 0.62, 0.70), fog), 1.0);
}
