//! `wgpu-anim bake-vat`: a character's clips baked into a vertex animation texture, with its size
//! and its error against skinning.

use crate::{BakeVatArgs, find_animation, load};
use wgpu_anim::offline::vat::{VatDesc, bake_vat};
use wgpu_anim::scene::Character;

pub(crate) fn bake(a: &BakeVatArgs) -> Result<(), String> {
    let (character, file) = match &a.file {
        Some(path) => {
            let imp = load(path)?;
            let s = Character::skeleton_of(&imp).map_err(|e| e.to_string())?;
            let file = path.display().to_string();
            let mut character = Character::from_imported(&imp, s).map_err(|e| e.to_string())?;
            if let Some(clip) = &a.clip {
                let animation = find_animation(&imp, &file, clip)?;
                let c = imp.skeletons[s].clip_of_animation(animation).ok_or_else(|| {
                    format!("{file}: animation {animation} does not animate the skeleton that has the mesh")
                })?;
                let id =
                    character.clips.get(c).copied().ok_or_else(|| {
                        format!("{file}: animation {animation} made no clip of the character's library")
                    })?;
                character.clips = vec![id];
            }
            (character, file)
        }
        None => {
            let mut character = Character::mannequin();
            if let Some(clip) = &a.clip {
                let lib = &character.library;
                let id = lib
                    .clip_id(character.skeleton, clip)
                    .map_err(|_| format!("the mannequin has no clip '{clip}' (it has {:?})", character.clip_names))?;
                character.clips = vec![id];
            }
            (character, "the built-in mannequin".to_owned())
        }
    };
    let desc = VatDesc {
        fps: a.fps as f32,
        clips: character.clips.clone(),
    };
    let lib = &character.library;
    let started = std::time::Instant::now();
    let vat = bake_vat(lib, character.skeleton, &character.mesh, &desc, |name, done, all| {
        eprintln!(
            "baked clip {done}/{all} '{name}' ({:.1} s)",
            started.elapsed().as_secs_f32()
        );
    })
    .map_err(|e| format!("{file}: {e}"))?;
    outln!(
        "VAT of {file}: {} vertices, {} clips at {} frames per second\n",
        vat.vertex_count,
        vat.clips.len(),
        vat.fps
    );
    outln!("| clip | duration (s) | frames | bytes |");
    outln!("|---|---:|---:|---:|");
    for c in &vat.clips {
        outln!(
            "| {} | {:.3} | {} | {} |",
            c.name,
            c.duration,
            c.frame_count,
            8 * u64::from(c.frame_count) * u64::from(vat.vertex_count)
        );
    }
    let r = &vat.report;
    let bytes = vat.gpu_bytes(lib.clips().len() as u32);
    let worst = lib.clip_names().get(r.worst.0 as usize).map_or("?", String::as_str);
    outln!(
        "\n{bytes} bytes on the GPU (8 per vertex and frame). Against skinning, over {} poses (every \
         frame and {} times between), in model units: positions within {:.4} (worst in '{worst}' at \
         {:.3} s), {:.4} on average; normals within {:.2}°.",
        r.poses_checked,
        wgpu_anim::vat::VatReport::STEPS - 1,
        r.max_position_error,
        r.worst.1,
        r.mean_position_error,
        r.max_normal_error_degrees
    );
    if let Some(out) = &a.out {
        std::fs::write(out, vat.to_bytes()).map_err(|e| format!("{}: {e}", out.display()))?;
        eprintln!("wrote {}", out.display());
    }
    Ok(())
}
