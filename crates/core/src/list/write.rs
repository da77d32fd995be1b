//! Writing a [`Blocklist`] as one file image (docs/FORMAT.md).

use crate::format::{self, tag, Directory, SectionData};
use crate::sections;

use super::model::{Blocklist, Engine};

impl Blocklist {
    /// The whole file image, as [`Blocklist::write_to`] writes it (with the creation time the
    /// list holds).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing into a Vec cannot fail.
        let _ = self.write_to(&mut out, None);
        out
    }

    /// Writes the file image to `out` and returns its directory (sections and checksum);
    /// `created` replaces the creation time recorded (the writer's clock: this crate has none).
    pub fn write_to(
        &self,
        out: &mut impl std::io::Write,
        created: Option<u64>,
    ) -> std::io::Result<Directory> {
        let mut meta = self.meta.clone();
        if let Some(created) = created {
            meta.created = created;
        }
        let meta = sections::encode_meta(&meta);
        let categories = sections::encode_categories(self.resolver.categories());
        let category_sets = self
            .resolver
            .verification()
            .filter(|v| !v.set_of().is_empty())
            .map(sections::encode_category_sets);
        let exceptions = (!self.resolver.exceptions().is_empty())
            .then(|| sections::encode_exceptions(self.resolver.exceptions()));
        // (tag, index, parameter block, data) of each structure section.
        let mut blocks: Vec<(u16, u16, Vec<u8>, &[u8])> = Vec::new();
        let mut extra: Vec<(u16, Vec<u8>)> = Vec::new();
        let mut patch_parts: Vec<(u16, Vec<u8>, Vec<u8>)> = Vec::new();
        let mut static_parts: Vec<(u16, Vec<u8>, Vec<u8>)> = Vec::new();
        let layers = match &self.engine {
            Engine::Keys(layers) => Some(layers),
            Engine::Urls(urls) => {
                if let Some(gate) = urls.gate() {
                    blocks.push((
                        gate.section_tag(),
                        0,
                        sections::encode_filter_params(&gate.filter().params()),
                        gate.filter().bit_bytes(),
                    ));
                }
                Some(urls.layers())
            }
            Engine::Cabf(engine) => {
                extra.push((
                    tag::CABF,
                    sections::encode_cabf(engine.split().code(), engine.component_filters() as u32),
                ));
                for (index, filter) in engine.filters().enumerate() {
                    blocks.push((
                        tag::FILTER,
                        index as u16,
                        sections::encode_filter_params(&filter.params()),
                        filter.bit_bytes(),
                    ));
                }
                None
            }
            Engine::Near(engine) => {
                extra.push((tag::NEAR_TABLES, engine.encode_tables()));
                extra.push((tag::NEAR_DOCS, engine.encode_docs()));
                None
            }
            Engine::Keywords(engine) => {
                let filter = engine.filter();
                blocks.push((
                    tag::FILTER,
                    0,
                    sections::encode_filter_params(&filter.params()),
                    filter.bit_bytes(),
                ));
                extra.push((tag::KEYWORD_LENGTHS, engine.encode_lengths()));
                if let Some(gate) = engine.gate() {
                    blocks.push((
                        tag::PHRASE_GATE,
                        0,
                        sections::encode_filter_params(&gate.filter().params()),
                        gate.filter().bit_bytes(),
                    ));
                }
                None
            }
        };
        if let Some(layers) = layers {
            for (index, layer) in layers.layers().iter().enumerate() {
                let (tag, params, bytes) = sections::encode_layer(layer);
                blocks.push((tag, index as u16, params, bytes));
            }
            for (index, patch) in layers.patches().iter().enumerate() {
                let (block, coded) = sections::encode_patch(patch);
                patch_parts.push((index as u16, block, coded));
            }
            for (index, patch) in layers.static_patches().iter().enumerate() {
                let (block, solution) = sections::encode_static_patch(patch);
                static_parts.push((index as u16, block, solution));
            }
            if layers.grows() {
                extra.push((
                    tag::GROWTH,
                    sections::encode_growth(
                        crate::structure::EXPANSION as u32,
                        crate::structure::TIGHTENING,
                    ),
                ));
            }
        }
        let mut data = vec![SectionData {
            tag: tag::META,
            index: 0,
            parts: vec![&meta],
        }];
        for (index, block, coded) in &patch_parts {
            data.push(SectionData {
                tag: tag::PATCH,
                index: *index,
                parts: vec![block, coded],
            });
        }
        for (index, block, solution) in &static_parts {
            data.push(SectionData {
                tag: tag::STATIC_PATCH,
                index: *index,
                parts: vec![block, solution],
            });
        }
        for (tag, index, params, bits) in &blocks {
            data.push(SectionData {
                tag: *tag,
                index: *index,
                parts: vec![params, bits],
            });
        }
        if let Some(table) = self.resolver.verification() {
            data.push(SectionData {
                tag: tag::VERIFY,
                index: 0,
                parts: vec![sections::encode_verify(table.fingerprints())],
            });
        }
        for (tag, bytes) in &extra {
            data.push(SectionData {
                tag: *tag,
                index: 0,
                parts: vec![bytes],
            });
        }
        data.push(SectionData {
            tag: tag::CATEGORIES,
            index: 0,
            parts: vec![&categories],
        });
        if let Some(bytes) = &category_sets {
            data.push(SectionData {
                tag: tag::CATEGORY_SETS,
                index: 0,
                parts: vec![bytes],
            });
        }
        if let Some(bytes) = &exceptions {
            data.push(SectionData {
                tag: tag::EXCEPTIONS,
                index: 0,
                parts: vec![bytes],
            });
        }
        // Ascending (tag, index) order, as the format requires.
        data.sort_by_key(|section| (section.tag, section.index));
        let spilled: Vec<format::SpilledSection<'_>> = match &self.engine {
            Engine::Keywords(engine) => engine.spilled_sections(),
            _ => Vec::new(),
        };
        let directory = format::plan_spilled(self.kind.code(), &data, &spilled)?;
        format::write_spilled(out, &directory, &data, &spilled)?;
        Ok(directory)
    }
}
