import {
  OperationNodeTransformer,
  type IdentifierNode,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RawNode,
  type RootOperationNode,
  type UnknownRow,
} from "kysely";

/**
 * Rewrites firm-queue's names in every query a Kysely instance runs: identifiers (tables, table
 * references, index names) and the text of raw `sql` templates and `sql.raw` statements (the
 * PostgreSQL hot-path statements, migrations). Values are parameters and never touched; user
 * input only reaches SQL as parameters. `rename` is {@link TableNames.sql}.
 */
export class TablePrefixPlugin implements KyselyPlugin {
  private readonly transformer: RenamingTransformer;

  constructor(rename: (text: string) => string) {
    this.transformer = new RenamingTransformer(rename);
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return this.transformer.transformNode(args.node, args.queryId);
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return args.result;
  }
}

class RenamingTransformer extends OperationNodeTransformer {
  constructor(private readonly rename: (text: string) => string) {
    super();
  }

  protected override transformIdentifier(node: IdentifierNode, queryId?: PluginTransformQueryArgs["queryId"]) {
    const transformed = super.transformIdentifier(node, queryId);
    const name = this.rename(transformed.name);
    return name === transformed.name ? transformed : { ...transformed, name };
  }

  protected override transformRaw(node: RawNode, queryId?: PluginTransformQueryArgs["queryId"]) {
    const transformed = super.transformRaw(node, queryId);
    return { ...transformed, sqlFragments: transformed.sqlFragments.map(this.rename) };
  }
}
