//! The fixed scene the browser test evaluates, the same code natively and in the browser: a
//! crowd of mannequins after a fixed number of fixed steps (every member's skinning matrices and
//! a picture of them), and the Fox of the glTF sample models at the time of one of the
//! conformance fixtures (its joints' world matrices).

use wgpu_anim::gpu::{Animator, AnimatorDesc, GroundRenderer, InstanceDesc, LoopMode, OffscreenTarget};
use wgpu_anim::offline::gltf_import;
use wgpu_anim::scene::{Crowd, CrowdDesc};
use wgpu_anim::shaders::Resource;
use wgpu_anim::{Affine, Error, Result};

/// The picture's size in pixels.
pub const SIZE: (u32, u32) = (320, 200);
/// Members of the crowd.
const CROWD: u32 = 24;
/// Steps of [`STEP`] seconds the crowd takes before it is read back.
const STEPS: u32 = 20;
/// Seconds per step.
const STEP: f32 = 1.0 / 30.0;
/// The conformance fixture whose asset, animation and time the Fox is evaluated at
/// (`tests/fixtures/conformance/fox_walk_t0.37.json`).
const FOX_ANIMATION: usize = 1;
const FOX_TIME: f32 = 0.37;

/// What the scene evaluates to.
pub struct Evaluation {
    /// Every member's joints' world matrices (its model-space joint matrices placed by its
    /// world transform), 12 floats each: the three rows of an [`Affine`], translation in `w`.
    pub crowd: Vec<f32>,
    /// The Fox's joints' world matrices, 12 floats each.
    pub fox: Vec<f32>,
    /// The crowd drawn from its overview camera: [`SIZE`] RGBA8 pixels, top row first.
    pub picture: Vec<u8>,
}

/// Evaluates the scene on `device`, the crowd `late` seconds later than the test's time (0 for
/// the test; another value makes the wrong pose the comparison must notice).
pub async fn evaluate(device: &wgpu::Device, queue: &wgpu::Queue, late: f32) -> Result<Evaluation> {
    let (crowd, picture) = crowd(device, queue, late).await?;
    let fox = fox(device, queue).await?;
    Ok(Evaluation { crowd, fox, picture })
}

async fn crowd(device: &wgpu::Device, queue: &wgpu::Queue, late: f32) -> Result<(Vec<f32>, Vec<u8>)> {
    let (width, height) = SIZE;
    let target = OffscreenTarget::new(device, width, height)?;
    // Half dual-quaternion skinning: the skinning module's linear and dual-quaternion paths both
    // run in the browser's shader compiler.
    let skinning = wgpu_anim::gpu::Skinning::Blend(0.5);
    let desc = CrowdDesc { count: CROWD, seed: 7, moving: false, footprints: false, skinning, ..CrowdDesc::default() };
    let mut crowd = Crowd::with_character_async(
        device,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
        &desc,
        wgpu_anim::scene::Character::mannequin(),
    )
    .await?;
    // The staged path, which writes every stage's buffer (the model-space poses among them).
    crowd.animator.set_fused(false)?;
    crowd.set_camera(queue, &crowd.overview_camera(width as f32 / height as f32));
    for step in 0..STEPS {
        let dt = if step == 0 { STEP + late } else { STEP };
        crowd.update(queue, dt);
        let mut encoder = device.create_command_encoder(&Default::default());
        crowd.encode(&mut encoder)?;
        if step + 1 == STEPS {
            let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
            crowd.draw(&mut pass)?;
        }
        queue.submit([encoder.finish()]);
    }
    let matrices = world_matrices(&crowd.animator, device, queue).await?;
    let picture = target.read_rgba_async(device, queue).await?;
    Ok((matrices, picture))
}

async fn fox(device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<f32>> {
    // The file's buffer inlined as a data URI, so that it loads from memory in a browser too.
    let gltf = include_str!("../../assets/Fox/Fox.gltf");
    let bin = include_bytes!("../../assets/Fox/Fox.bin");
    let uri = format!("data:application/octet-stream;base64,{}", base64(bin));
    let gltf = gltf.replacen("\"Fox.bin\"", &format!("\"{uri}\""), 1);
    let imported = gltf_import::load_slice(gltf.as_bytes(), "Fox/Fox.gltf", None)?;
    let built = imported.build_library()?;
    let skeleton = imported.primary_skeleton().ok_or_else(|| missing("a skeleton"))?;
    let clip = imported.skeletons[skeleton]
        .clip_of_animation(FOX_ANIMATION)
        .ok_or_else(|| missing("the fixture's animation"))?;
    let mut animator =
        Animator::new_async(device, &built.library, &AnimatorDesc::default().with_max_instances(1)).await?;
    animator.controller_mut().add_instance(
        &InstanceDesc::new(built.clips[skeleton][clip])
            .with_time(FOX_TIME)
            .with_rate(0.0)
            .with_loop_mode(LoopMode::Once),
    )?;
    animator.prepare(queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder)?;
    queue.submit([encoder.finish()]);
    world_matrices(&animator, device, queue).await
}

/// Every instance's joints' world matrices, in instance order, as floats: the model-space
/// poses the GPU wrote, placed by the instance's world transform.
async fn world_matrices(animator: &Animator, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<f32>> {
    let mut out = Vec::new();
    for page in 0..animator.controller().page_count() {
        let instances = animator.controller().page_instances(page);
        let Some(end) = instances.iter().map(|i| i.joint_offset + i.joint_count).max() else {
            continue;
        };
        let all: Vec<Affine> =
            animator.read_page_buffer_async(device, queue, page, Resource::ModelPoses, 0, u64::from(end)).await?;
        for i in instances {
            let joints = &all[i.joint_offset as usize..(i.joint_offset + i.joint_count) as usize];
            let world: Vec<Affine> = joints.iter().map(|m| i.world.mul(m)).collect();
            out.extend_from_slice(bytemuck::cast_slice::<Affine, f32>(&world));
        }
    }
    Ok(out)
}

fn missing(what: &str) -> Error {
    Error::Asset { file: "Fox/Fox.gltf".into(), what: format!("has no {what}") }
}

/// Standard base64 of `bytes`, with padding.
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Writes `e` as the bytes the page posts: three length-prefixed sections (crowd floats, Fox
/// floats, picture bytes), each prefixed by its length in elements as a little-endian u32.
#[cfg(target_arch = "wasm32")]
pub fn encode(e: &Evaluation) -> Vec<u8> {
    let mut out = Vec::new();
    for section in [bytemuck::cast_slice::<f32, u8>(&e.crowd), bytemuck::cast_slice(&e.fox), &e.picture] {
        out.extend_from_slice(&(section.len() as u32).to_le_bytes());
        out.extend_from_slice(section);
    }
    out
}

/// Reads what `encode` wrote, and the text after it; `None` when it is not that.
#[cfg(not(target_arch = "wasm32"))]
pub fn decode(bytes: &[u8]) -> Option<(Evaluation, String)> {
    let mut rest = bytes;
    let mut sections = Vec::new();
    for _ in 0..3 {
        let (len, tail) = rest.split_first_chunk::<4>()?;
        let len = u32::from_le_bytes(*len) as usize;
        if tail.len() < len {
            return None;
        }
        sections.push(tail[..len].to_vec());
        rest = &tail[len..];
    }
    let floats = |b: &[u8]| -> Option<Vec<f32>> {
        b.len()
            .is_multiple_of(4)
            .then(|| b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect())
    };
    let evaluation = Evaluation { crowd: floats(&sections[0])?, fox: floats(&sections[1])?, picture: sections.pop()? };
    Some((evaluation, String::from_utf8_lossy(rest).into_owned()))
}
