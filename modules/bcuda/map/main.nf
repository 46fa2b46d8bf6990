// bcuda map: reads (one file, or a pair) to a coordinate-sorted BAM with its .bai in one
// process: aln of each end, then samse or sampe, the .sai in memory. The records are bwa aln +
// samse/sampe 0.7.17's, sorted as samtools sort sorts them. Input tuple(meta, reads) with one
// or two files, the index folder; emits the BAM, its index and versions.yml. The read group is
// @RG ID and SM of meta.id unless ext.args gives -R. ext.args: map's options, e.g.
// "--aln '-l 1024 -n 0.01 -o 2' --sampe '-a 600'".
process BCUDA_MAP {
    tag "$meta.id"
    label 'process_high'
    label 'process_gpu'

    conda "${moduleDir}/environment.yml"
    container 'bcuda:0.1.0'

    input:
    tuple val(meta), path(reads)
    tuple val(meta2), path(index)

    output:
    tuple val(meta), path("*.bam")               , emit: bam
    tuple val(meta), path("*.{bai,csi}")         , emit: index
    path "versions.yml"                          , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args   = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    def rg     = args.contains('-R ') ? '' : "-R '@RG\\tID:${meta.id}\\tSM:${meta.id}'"
    """
    INDEX=\$(find -L ./ -name "*.amb" | sed 's/\\.amb\$//')
    bcuda map $args $rg -t $task.cpus --sort -o ${prefix}.bam \$INDEX $reads

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        bcuda: \$(bcuda --version | sed 's/^bcuda //')
    END_VERSIONS
    """

    stub:
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    touch ${prefix}.bam ${prefix}.bam.bai
    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        bcuda: \$(bcuda --version | sed 's/^bcuda //')
    END_VERSIONS
    """
}
