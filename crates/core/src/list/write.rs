//! Writing a [`Blocklist`] as one file image (docs/FORMAT.md).

use std::borrow::Cow;

use phishbloom_filter::Filter;

use crate::format::{self, tag, Directory, SectionData};
use crate::sections;
use crate::structure::Layers;

use super::model::{Blocklist, Engine};

/// One section to write: its tag, index and bytes, owned (encoded here) or borrowed (a
/// structure's bits, written in place).
struct Section<'a> {
    tag: u16,
    index: u16,
    parts: Vec<Cow<'a, [u8]>>,
}

impl<'a> Section<'a> {
    /// Section `tag`, index 0, of one owned part.
    fn owned(tag: u16, bytes: Vec<u8>) -> Self {
        Section {
            tag,
            index: 0,
            parts: vec![Cow::Owned(bytes)],
        }
    }

    /// A filter section: its parameter block, then its bits in place.
    fn filter(tag: u16, index: u16, filter: &'a dyn Filter) -> Self {
        Section {
            tag,
            index,
            parts: vec![
                Cow::Owned(sections::encode_filter_params(&filter.params())),
                Cow::Borrowed(filter.bit_bytes()),
            ],
        }
    }

    /// A section of two parts, the first owned.
    fn two(tag: u16, index: u16, first: Vec<u8>, second: Cow<'a, [u8]>) -> Self {
        Section {
            tag,
            index,
            parts: vec![Cow::Owned(first), second],
        }
    }

    fn data(&self) -> SectionData<'_> {
        SectionData {
            tag: self.tag,
            index: self.index,
            parts: self.parts.iter().map(|part| &**part).collect(),
        }
    }
}

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
        let mut all = vec![Section::owned(tag::META, sections::encode_meta(&meta))];
        all.extend(self.engine_sections());
        all.extend(self.resolver_sections());
        let mut data: Vec<SectionData<'_>> = all.iter().map(Section::data).collect();
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

    /// The sections of the engine: its structure, and what its kind adds (a gate, CaBF's
    /// parameters, near tables, phrase lengths).
    fn engine_sections(&self) -> Vec<Section<'_>> {
        let mut out = Vec::new();
        match &self.engine {
            Engine::Keys(layers) => out.extend(layer_sections(layers)),
            Engine::Urls(urls) => {
                if let Some(gate) = urls.gate() {
                    out.push(Section::filter(gate.section_tag(), 0, gate.filter()));
                }
                out.extend(layer_sections(urls.layers()));
            }
            Engine::Cabf(engine) => {
                out.push(Section::owned(
                    tag::CABF,
                    sections::encode_cabf(engine.split().code(), engine.component_filters() as u32),
                ));
                for (index, filter) in engine.filters().enumerate() {
                    out.push(Section::filter(tag::FILTER, index as u16, filter));
                }
            }
            Engine::Near(engine) => {
                let (lookup_tag, lookup) = engine.encode_lookup();
                out.push(Section::owned(lookup_tag, lookup));
                out.push(Section::owned(tag::NEAR_DOCS, engine.encode_docs()));
            }
            Engine::Keywords(engine) => {
                out.push(Section::filter(tag::FILTER, 0, &**engine.filter()));
                out.push(Section::owned(
                    tag::KEYWORD_LENGTHS,
                    engine.encode_lengths(),
                ));
                if let Some(gate) = engine.gate() {
                    out.push(Section::filter(tag::PHRASE_GATE, 0, gate.filter()));
                }
            }
        }
        out
    }

    /// The sections of the resolver: verification table, categories, category sets,
    /// exceptions.
    fn resolver_sections(&self) -> Vec<Section<'_>> {
        let resolver = &self.resolver;
        let mut out = Vec::new();
        if let Some(table) = resolver.verification() {
            out.push(Section {
                tag: tag::VERIFY,
                index: 0,
                parts: vec![Cow::Borrowed(sections::encode_verify(table.fingerprints()))],
            });
        }
        out.push(Section::owned(
            tag::CATEGORIES,
            sections::encode_categories(resolver.categories()),
        ));
        let with_sets = resolver.verification().filter(|v| !v.set_of().is_empty());
        if let Some(table) = with_sets {
            out.push(Section::owned(
                tag::CATEGORY_SETS,
                sections::encode_category_sets(table.sets(), table.set_of()),
            ));
        }
        if let Some(table) = resolver.compact() {
            out.push(Section::owned(
                tag::CATEGORY_SETS,
                sections::encode_category_sets(table.sets(), &[]),
            ));
        }
        if !resolver.tops().is_empty() {
            out.push(Section {
                tag: tag::TOPS,
                index: 0,
                parts: vec![Cow::Borrowed(sections::encode_verify(resolver.tops()))],
            });
        }
        if !resolver.never().is_empty() {
            out.push(Section {
                tag: tag::NEVER,
                index: 0,
                parts: vec![Cow::Borrowed(sections::encode_verify(resolver.never()))],
            });
        }
        if !resolver.exceptions().is_empty() {
            out.push(Section::owned(
                tag::EXCEPTIONS,
                sections::encode_exceptions(resolver.exceptions()),
            ));
        }
        out
    }
}

/// The sections of a list's layers: each layer, each patch and static patch, and the growth
/// parameters of a list that grows.
fn layer_sections(layers: &Layers) -> Vec<Section<'_>> {
    let mut out = Vec::new();
    for (index, layer) in layers.layers().iter().enumerate() {
        let (tag, params, bytes) = sections::encode_layer(layer);
        out.push(Section::two(tag, index as u16, params, bytes));
    }
    // Each patch is a parameter block and its coded prefixes or ribbon solution.
    let patches: Vec<_> = layers
        .patches()
        .iter()
        .map(sections::encode_patch)
        .collect();
    let statics: Vec<_> = layers
        .static_patches()
        .iter()
        .map(sections::encode_static_patch)
        .collect();
    for (tag, coded) in [(tag::PATCH, patches), (tag::STATIC_PATCH, statics)] {
        for (index, (block, data)) in coded.into_iter().enumerate() {
            out.push(Section::two(tag, index as u16, block, Cow::Owned(data)));
        }
    }
    if layers.grows() {
        out.push(Section::owned(
            tag::GROWTH,
            sections::encode_growth(
                crate::structure::EXPANSION as u32,
                crate::structure::TIGHTENING,
            ),
        ));
    }
    out
}
