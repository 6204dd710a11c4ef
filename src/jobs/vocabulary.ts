/**
 * The reviewed skill vocabulary (skills.json, shipped with the code): every skill a posting
 * is filed under and a `skills` filter may name, with its category and aliases. Names and
 * aliases are matched case- and width-insensitively, runs of spaces collapsed.
 */
import skillsFile from './skills.json' with { type: 'json' };

export interface Skill {
  name: string;
  category: string;
  aliases: string[];
}

export const skillKey = (s: string): string => s.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();

export class Vocabulary {
  readonly skills: readonly Skill[];
  readonly categories: readonly string[];
  readonly #byKey = new Map<string, Skill>();

  constructor(skills: Skill[]) {
    this.skills = [...skills].sort((a, b) => a.category.localeCompare(b.category) || a.name.localeCompare(b.name));
    this.categories = [...new Set(this.skills.map((s) => s.category))].sort();
    for (const s of this.skills) {
      for (const name of [s.name, ...s.aliases]) {
        const key = skillKey(name);
        const other = this.#byKey.get(key);
        if (other && other !== s) throw new Error(`skill vocabulary: "${name}" names both ${other.name} and ${s.name}`);
        this.#byKey.set(key, s);
      }
    }
  }

  /** The skill a name or alias stands for. */
  resolve(name: string): Skill | undefined {
    return this.#byKey.get(skillKey(name));
  }
}

let shipped: Vocabulary | undefined;
/** The vocabulary in the repository (parsed once). */
export function skillVocabulary(): Vocabulary {
  return (shipped ??= new Vocabulary(skillsFile as Skill[]));
}
