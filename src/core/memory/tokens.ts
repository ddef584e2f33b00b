/** The conversation context counts tokens with the engine's one tokenizer. */
export { loadTokenCounter, loadTokenizer, type TokenCounter, type Tokenizer } from '../tokens';
